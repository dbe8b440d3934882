import { defineConfig } from 'vitest/config';

// Tests run from TypeScript sources: the "source" export condition points every
// @reposcan/* import at src/, so no build step is needed before `vitest run`.
export default defineConfig({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    include: ['packages/*/test/**/*.test.ts', 'apps/*/test/**/*.test.ts', 'bench/test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
