// The count + write floor: what a scan cannot do without, overlapped as well as it can be. The
// engine's files are prepared first (floor-input.mjs, untimed, as for the tokenizer floor); then,
// timed, the tokenizer pool counts them on every core while the main thread writes their bytes into
// three files as the artifacts carry them (as they are twice, JSON-escaped once) through 1 MB
// buffers, SHA-256 over every byte written, each file synced at the end. No headers, no tree, no
// walk or read in the timed part: a lower bound for a full scan, which does all of that too.
// `node bench/children/scan-floor.mjs <root> <outDir>`; prints one JSON line.
import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { createTokenPool, escapeJsonInto, MAX_ESCAPED_BYTES } from '@reposcan/core';
import { floorInput } from './floor-input.mjs';

const [root, outDir] = process.argv.slice(2);
const { views, total, batches } = await floorInput(root);

const pool = createTokenPool({ encoding: 'o200k_base', threads: availableParallelism() });
await pool.warm();

/** One artifact's bytes: every content, escaped or not, through a 1 MB buffer; hashed; synced. */
async function writeArtifact(name, escaped) {
  const handle = await open(join(outDir, name), 'w');
  const hash = createHash('sha256');
  const buffer = Buffer.allocUnsafe(1 << 20);
  let at = 0;
  let written = 0;
  const flush = async () => {
    hash.update(buffer.subarray(0, at));
    await handle.write(buffer, 0, at);
    written += at;
    at = 0;
  };
  const progress = { read: 0, written: 0 };
  for (const content of views) {
    for (let from = 0; from < content.length;) {
      if (escaped) {
        if (buffer.length - at < MAX_ESCAPED_BYTES) await flush();
        const p = escapeJsonInto(content, from, buffer, at, progress);
        from = p.read;
        at = p.written;
      } else {
        if (at === buffer.length) await flush();
        const n = Math.min(content.length - from, buffer.length - at);
        buffer.set(content.subarray(from, from + n), at);
        at += n;
        from += n;
      }
    }
  }
  await flush();
  await handle.sync();
  await handle.close();
  hash.digest();
  return written;
}

const started = performance.now();
const [counts, ...written] = await Promise.all([
  Promise.all(batches.map((b) => pool.count(b))),
  writeArtifact('output.txt', false),
  writeArtifact('output.md', false),
  writeArtifact('output.json', true),
]);
const ms = performance.now() - started;
await pool.close();
const tokens = counts.flat().reduce((sum, n) => sum + n, 0);
const writtenBytes = written.reduce((sum, n) => sum + n, 0);
process.stdout.write(
  `${JSON.stringify({ ms, files: views.length, bytes: total, tokens, written_bytes: writtenBytes, threads: pool.threads, max_rss_mb: process.resourceUsage().maxRSS / 1024 })}\n`,
);
