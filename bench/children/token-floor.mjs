// The tokenizer floor: the exact count of every file the engine would count, with the engine's
// tokenizer pool on every core and nothing else to do; only the counting is timed (floor-input.mjs
// prepares the files). `node bench/children/token-floor.mjs <root>`; prints one JSON line.
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { createTokenPool } from '@reposcan/core';
import { floorInput } from './floor-input.mjs';

const { views, total, batches } = await floorInput(process.argv[2]);
const threads = availableParallelism();
const pool = createTokenPool({ encoding: 'o200k_base', threads });
await pool.warm();
const started = performance.now();
const counts = await Promise.all(batches.map((b) => pool.count(b)));
const ms = performance.now() - started;
await pool.close();
const tokens = counts.flat().reduce((sum, n) => sum + n, 0);
process.stdout.write(
  `${JSON.stringify({ ms, files: views.length, bytes: total, tokens, threads, max_rss_mb: process.resourceUsage().maxRSS / 1024 })}\n`,
);
