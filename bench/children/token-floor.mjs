// The tokenizer floor: the exact count of every file the engine would count, with the engine's
// tokenizer pool on every core and nothing else to do. Files are chosen, read and classified first
// (the engine's walk and classification, so the set and the UTF-8 bytes are the engine's); only the
// counting is timed. `node bench/children/token-floor.mjs <root>`; prints one JSON line.
import { readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { DEFAULT_ENGINE_LIMITS, DEFAULT_SCAN_OPTIONS, classifyContent, createTokenPool, walkTree } from '@reposcan/core';

const root = process.argv[2];
const limits = { ...DEFAULT_ENGINE_LIMITS, maxFiles: 10_000_000 };
const walked = await walkTree({ root, subdir: null, options: DEFAULT_SCAN_OPTIONS, limits });
const contents = [];
for (const file of walked.files) {
  const result = classifyContent(file.path, new Uint8Array(await readFile(file.absPath)));
  if (result.textual) contents.push(result.content);
}
// One SharedArrayBuffer for everything, as the engine's read ring: threads read it without a copy.
const total = contents.reduce((sum, c) => sum + c.length, 0);
const shared = new Uint8Array(new SharedArrayBuffer(total));
const views = [];
let offset = 0;
for (const c of contents) {
  shared.set(c, offset);
  views.push(shared.subarray(offset, offset + c.length));
  offset += c.length;
}
// The engine's batch shape: at most 50 files or about 1 MB.
const batches = [];
let batch = [];
let batchBytes = 0;
for (const view of views) {
  batch.push(view);
  batchBytes += view.length;
  if (batch.length === 50 || batchBytes >= 1_000_000) {
    batches.push(batch);
    batch = [];
    batchBytes = 0;
  }
}
if (batch.length > 0) batches.push(batch);

const threads = availableParallelism();
const pool = createTokenPool({ encoding: 'o200k_base', threads });
await pool.warm();
const started = performance.now();
const counts = await Promise.all(batches.map((b) => pool.count(b)));
const ms = performance.now() - started;
await pool.close();
const tokens = counts.flat().reduce((sum, n) => sum + n, 0);
process.stdout.write(`${JSON.stringify({ ms, files: views.length, bytes: total, tokens, threads, max_rss_mb: process.resourceUsage().maxRSS / 1024 })}\n`);
