import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';

const ALL = [
  'packages/*/test/**/*.test.ts',
  'apps/*/test/**/*.test.ts',
  'bench/test/**/*.test.ts',
  'scripts/test/**/*.test.ts',
];

/**
 * Test files that need more than Node and a temporary folder, or take long: `npm run
 * test:integration`. Every other file is a unit test (`npm run test:unit`): no Redis, no API or
 * worker (neither in this process nor as a child), no Chromium, no `script`, no git or HTTP
 * server, and quick. A unit test that opens a network connection fails (scripts/unit-test-guard.ts).
 */
const INTEGRATION = [
  // A real API (startTestApi, or API and worker processes), most of them on Redis; the MCP
  // endpoint's among them.
  'apps/api/test/**/*.e2e.test.ts',
  'apps/api/test/http-contract.test.ts',
  'packages/client/test/client.test.ts',
  'packages/client/test/openapi-contract.test.ts',
  // Chromium drives the web page.
  'apps/api/test/web-page.browser.test.ts',
  // The CLI as a child process against a real API; `script` for its terminal. --local alone:
  // no service, but some twenty CLI processes through tsx, several seconds each on 2 busy cores.
  'apps/cli/test/cli.test.ts',
  'apps/cli/test/cli-local.test.ts',
  'apps/cli/test/cli-api-keys.test.ts',
  'apps/cli/test/cli-secrets.test.ts',
  'apps/cli/test/cli-mcp.test.ts',
  'apps/cli/test/cli-compress.test.ts',
  // Redis: the BullMQ transport, state signals, queue purge, a private redis-server restarted;
  // the janitor with a Redis client that finds no server.
  'packages/queue/test/**/*.test.ts',
  'packages/runtime/test/janitor-redis-down.test.ts',
  // A worker's METRICS_PORT server on loopback (its queue and volume stand-ins).
  'packages/scan-worker/test/serve-worker-http.test.ts',
  // git over a loopback HTTP server.
  'packages/sources/test/remote/clone-remote.test.ts',
  'packages/sources/test/remote/private-clone.test.ts',
  'packages/sources/test/remote/change-digest.test.ts',
  'packages/sources/test/remote/resolved-ref.test.ts',
  // git in a worker thread.
  'packages/sources/test/remote/git-batch-in-thread.test.ts',
  // Differential runs against another program or path on random trees, a corpus or a race: git
  // (walk), js-tiktoken (token counts), a fresh scan (carried outputs), python3 swapping folders
  // under scans for 12 s.
  'packages/core/test/walk/git-differential.test.ts',
  'packages/core/test/walk/git-fuzz.test.ts',
  'packages/core/test/scan/carry-forward-fuzz.test.ts',
  'packages/core/test/tokens/token-counter.test.ts',
  'packages/core/test/tokens/bpe-wasm.test.ts',
  'packages/core/test/tokens/long-pieces.test.ts',
  'packages/core/test/tokens/tiktoken-sweep-*.test.ts',
  'packages/core/test/artifacts/write-parts.test.ts',
  'packages/core/test/scan/outside-race.test.ts',
  // Slow by design, each several CPU-seconds: a tree with more skipped paths than a call has
  // arguments, racing writers on one state.json, io threads started and stopped again and again.
  'packages/core/test/scan/unusual-trees.test.ts',
  'packages/storage/test/state-updates.test.ts',
  'packages/core/test/io/io-threads.test.ts',
];

/**
 * Unit files that need a process of their own: they mock a module the code under test imports
 * (vi.mock), depend on a module's pooled state (process-files: a read ring of the size it asks
 * for, not a larger one another file left idle), or count the process's threads, descriptors or
 * memory, which an earlier file's late clean-up would move.
 */
const UNIT_ISOLATED = [
  'packages/storage/test/scan-id-guard.test.ts',
  'packages/sources/test/remote/refusals.test.ts',
  'packages/core/test/scan/process-files.test.ts',
  'packages/core/test/io/prepare-file-threads.test.ts',
  'packages/core/test/tokens/token-pool.test.ts',
  'packages/sources/test/archive/extract-zip.test.ts',
  'packages/sources/test/archive/zip-bombs.test.ts',
];

// Tests run from TypeScript sources: the "source" export condition points every
// @reposcan/* import at src/, so no build step is needed before `vitest run`.
export default defineConfig({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    // eventsource-parser (under the MCP SDK's client) also exports its TypeScript sources under
    // "source": transformed here rather than handed to Node, which cannot load them.
    server: { deps: { inline: ['@modelcontextprotocol/sdk', 'eventsource-parser'] } },
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ALL,
          exclude: [...configDefaults.exclude, ...INTEGRATION, ...UNIT_ISOLATED],
          setupFiles: ['./scripts/unit-test-guard.ts'],
          // A file per core (vitest's default leaves one free): much of a unit file's time is
          // waiting on its threads and timers, and nothing else runs beside them.
          maxWorkers: availableParallelism(),
          // Files share their worker's modules: loading each file's graph afresh was over a third
          // of the suite's CPU time.
          isolate: false,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'unit-isolated',
          include: UNIT_ISOLATED,
          setupFiles: ['./scripts/unit-test-guard.ts'],
          maxWorkers: availableParallelism(),
          sequence: { groupOrder: 0 },
        },
      },
      // Then the integration files, as many at once as before (vitest's default, cores - 1). Their
      // Redis is REDIS_URL's, or a private redis-server when nothing answers there.
      {
        extends: true,
        test: {
          name: 'integration',
          include: INTEGRATION,
          globalSetup: ['./scripts/integration-redis.ts'],
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
