// Scans a large real tree (default: this repo's node_modules, default excludes cleared by
// scanning node_modules itself as the root) and prints wall time and peak RSS against the
// tree's size: memory must not grow with what was read.
// Usage: npx tsx --conditions=source scripts/scan-large-tree.ts [root]
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DEFAULT_ENGINE_LIMITS, DEFAULT_SCAN_OPTIONS, runScan } from '@reposcan/core';

const root = resolve(process.argv[2] ?? 'node_modules');
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
const readMb = report.summary.total_size / 1e6;
console.log(JSON.stringify({ root, files: report.summary.total_files, tree_mb: +readMb.toFixed(1), tokens: report.summary.estimated_tokens, seconds: +seconds.toFixed(1), peak_rss_mb: +peakMb.toFixed(0), artifacts_mb: +(report.artifacts.reduce((s, a) => s + a.bytes, 0) / 1e6).toFixed(1) }));
await rm(outDir, { recursive: true, force: true });
