// Scans a large real tree (default: this repo's node_modules, whose default excludes do not
// apply because it is the root) and prints wall time and peak RSS against the tree's size:
// memory must not grow with what was read. Several roots are compared, each in a fresh
// process, e.g. node_modules and a folder of three hard-linked copies of it:
//   mkdir -p /tmp/big3 && for i in 1 2 3; do cp -al node_modules /tmp/big3/copy$i; done
// Usage: npm run build && node scripts/scan-large-tree.mjs [root ...]
// It runs the built code, as the worker does: under tsx every token thread loads tsx too.
import { execFileSync } from 'node:child_process';
import console from 'node:console';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { DEFAULT_ENGINE_LIMITS, DEFAULT_SCAN_OPTIONS, runScan } from '@reposcan/core';

/** @param {string} root */
async function scanOne(root) {
  const outDir = await mkdtemp(join(tmpdir(), 'reposcan-large-'));
  const started = performance.now();
  let lastLine = 0;
  const report = await runScan(
    {
      root,
      repoName: 'large-tree',
      source: { type: 'local', url: null, hostFamily: null, ref: null, branch: null, commit: null, subdir: null },
      options: { ...DEFAULT_SCAN_OPTIONS, syncIgnore: false },
      limits: { ...DEFAULT_ENGINE_LIMITS, maxFiles: 1_000_000 },
      encoding: 'o200k_base',
      outDir,
    },
    {},
    (p) => {
      if (p.phase === 'read' && Date.now() - lastLine < 2000) return;
      lastLine = Date.now();
      process.stderr.write(`${p.phase} ${p.files_done}/${p.files_total}\n`);
    },
  );
  const seconds = (performance.now() - started) / 1000;
  const peakMb = process.resourceUsage().maxRSS / 1024;
  const treeMb = report.summary.total_size / 1e6;
  await rm(outDir, { recursive: true, force: true });
  const artifactsMb = report.artifacts.reduce((sum, a) => sum + a.bytes, 0) / 1e6;
  console.log(
    JSON.stringify({
      root,
      files: report.summary.total_files,
      tree_mb: +treeMb.toFixed(1),
      tokens: report.summary.estimated_tokens,
      seconds: +seconds.toFixed(1),
      peak_rss_mb: Math.round(peakMb),
      rss_per_tree: +(peakMb / treeMb).toFixed(2),
      artifacts_mb: +artifactsMb.toFixed(1),
    }),
  );
}

const roots = process.argv.slice(2).map((r) => resolve(r));
if (process.env.SCAN_LARGE_TREE_CHILD === '1') await scanOne(roots[0] ?? resolve('node_modules'));
else {
  for (const root of roots.length > 0 ? roots : [resolve('node_modules')]) {
    execFileSync(process.execPath, [fileURLToPath(import.meta.url), root], {
      env: { ...process.env, SCAN_LARGE_TREE_CHILD: '1' },
      stdio: ['ignore', 'inherit', 'ignore'],
    });
  }
}
