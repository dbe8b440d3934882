// One engine run in a fresh process (the built code, as the worker runs it), so peak RSS is this
// run's own: `node bench/children/engine-scan.mjs <root> <outDir>`. Prints one JSON line.
//
// BENCH_OPTIONS adds scan options (the engine's names, JSON: `{"secrets":"off"}`) to the API's defaults.
//
// BENCH_TOKEN_CACHE_DIR names the token cache location for this cold/warm pair: empty for the cold
// run, as the cold run left it for the warm one. Opened, synced and flushed as a worker does.
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { DEFAULT_ENGINE_LIMITS, DEFAULT_SCAN_OPTIONS, runScan } from '@reposcan/core';
import { VolumeTokenCache } from '@reposcan/storage';

const [root, outDir] = process.argv.slice(2);
const started = performance.now();
const cacheDir = process.env.BENCH_TOKEN_CACHE_DIR;
const cache = cacheDir ? await VolumeTokenCache.open(cacheDir, { maxEntries: 1_000_000 }) : null;
await cache?.sync();
const stats = { hits: 0, misses: 0 };
const report = await runScan(
  {
    root,
    repoName: 'bench',
    source: { type: 'local', url: null, hostFamily: null, ref: null, branch: null, commit: null, subdir: null },
    // The API's defaults: every artifact (txt, md, json), ignore files honoured, no zip.
    options: { ...DEFAULT_SCAN_OPTIONS, ...JSON.parse(process.env.BENCH_OPTIONS ?? '{}') },
    limits: { ...DEFAULT_ENGINE_LIMITS, maxFiles: 10_000_000 },
    encoding: 'o200k_base',
    outDir,
  },
  cache ? { tokenCache: { cache, stats } } : {},
);
await cache?.flush();
process.stdout.write(
  `${JSON.stringify({
    ms: performance.now() - started,
    files: report.summary.total_files,
    bytes: report.summary.total_size,
    tokens: report.summary.estimated_tokens,
    artifact_bytes: report.artifacts.reduce((sum, a) => sum + a.bytes, 0),
    timings: report.timings,
    token_cache: stats,
    secrets: report.secrets ? { count: report.secrets.count, not_checked: report.secrets.not_checked.length } : null,
    compression: report.compression
      ? {
          files: report.compression.files,
          tokens_before: report.compression.tokens_before,
          tokens_after: report.compression.tokens_after,
          not_compressed: report.compression.not_compressed.length,
        }
      : null,
    cpu_ms: (process.cpuUsage().user + process.cpuUsage().system) / 1000,
    max_rss_mb: process.resourceUsage().maxRSS / 1024,
  })}\n`,
);
