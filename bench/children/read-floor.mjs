// The read floor: list the tree and read every regular file once (what `find | xargs cat` does),
// 50 reads in flight, in a fresh process: `node bench/children/read-floor.mjs <root>`.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import process from 'node:process';

const CONCURRENCY = 50;
const root = process.argv[2];
const started = performance.now();
const files = [];
async function walk(dir) {
  const entries = await readdir(dir, { withFileTypes: true });
  await Promise.all(
    entries.map((entry) =>
      entry.isDirectory() ? walk(join(dir, entry.name)) : entry.isFile() ? files.push(join(dir, entry.name)) : null,
    ),
  );
}
await walk(root);
let next = 0;
let bytes = 0;
await Promise.all(
  Array.from({ length: CONCURRENCY }, async () => {
    while (next < files.length) {
      const content = await readFile(files[next++]);
      bytes += content.length;
    }
  }),
);
process.stdout.write(
  `${JSON.stringify({ ms: performance.now() - started, files: files.length, bytes, max_rss_mb: process.resourceUsage().maxRSS / 1024 })}\n`,
);
