// Micro-benchmarks that used to be timing assertions in unit tests (the tests keep what the code
// returns; how fast it is is measured here): the token estimator against exact counting, and the
// inputs that make token counters, content classifiers or archive extractors slow. Built code, one process:
//   node --import tsx bench/children/micro.ts <corpus root> <scratch dir>
// Prints one JSON line: a list of measurements, each with the limit the old test asserted.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, readdir } from 'node:fs/promises';
import { isUtf8 } from 'node:buffer';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { classifyContent, createTokenCounter, estimateTokensFromBytes } from '@reposcan/core';
import { extractZip } from '@reposcan/sources';
import type { ZipLimits } from '@reposcan/sources';
import { encodeLegacy } from '../../packages/core/test/classify/legacy-encoder.js';
import type { MicroResult } from '../lib/report.js';

const [corpusRoot, scratch] = process.argv.slice(2) as [string, string];
const CRAFT_ZIP = fileURLToPath(new URL('../../packages/sources/test/archive/craft_zip.py', import.meta.url));
const MiB = 1024 * 1024;

const results: MicroResult[] = [];

function time(fn: () => unknown): number {
  const started = performance.now();
  fn();
  return performance.now() - started;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

/** Median of `runs` timings after one untimed call (JIT, lazy loads). Also returns that first call. */
function measure(fn: () => unknown, runs = 5): { first: number; median: number } {
  const first = time(fn);
  return { first, median: median(Array.from({ length: runs }, () => time(fn))) };
}

// ---- estimator against exact counting ----------------------------------------------------------
// TS/JS source of the corpus (no .d.ts, no minified bundles or maps, no file over 256 kB): every
// k-th file in path order, up to about 2 M chars.
function sourceSample(budget: number): string[] {
  const candidates: Array<{ path: string; size: number }> = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/(?<!\.d)\.[cm]?[tj]s$/.test(entry.name) && !/\.min\./.test(entry.name)) {
        const size = statSync(path).size;
        if (size > 0 && size <= 256 * 1024) candidates.push({ path, size });
      }
    }
  };
  walk(corpusRoot);
  candidates.sort((a, b) => (a.path < b.path ? -1 : 1));
  const stride = Math.max(1, Math.floor(candidates.reduce((sum, c) => sum + c.size, 0) / budget));
  const texts: string[] = [];
  let chars = 0;
  for (let start = 0; start < stride && chars < budget; start++) {
    for (let i = start; i < candidates.length && chars < budget; i += stride) {
      const text = readFileSync((candidates[i] as { path: string }).path, 'utf8');
      if (text.length / text.split('\n').length > 300) continue; // generated: long lines
      texts.push(text);
      chars += text.length;
    }
  }
  return texts;
}

// Both on UTF-8 bytes, as inspect (estimate) and scans (exact, the compiled counter) run them. The
// estimator used to be asserted at least 3x faster than exact counting; since counting moved to
// WebAssembly it is not, and this is shown for information: what an exact preview would cost.
{
  const texts = sourceSample(2_000_000).map((text) => Buffer.from(text, 'utf8'));
  const mb = texts.reduce((sum, t) => sum + t.length, 0) / 1e6;
  const exact = createTokenCounter('o200k_base');
  const estimate = measure(() => texts.forEach((t) => estimateTokensFromBytes(t)), 3).median;
  const count = measure(() => texts.forEach((t) => exact.countUtf8(t)), 3).median;
  results.push(
    {
      key: 'estimator-mbps',
      label: `estimateTokensFromBytes, one thread (${texts.length} TS/JS files, ${mb.toFixed(1)} MB)`,
      value: mb / (estimate / 1000),
      unit: 'MB/s',
      limit: null,
    },
    {
      key: 'exact-mbps',
      label: 'exact o200k count of the same bytes, one thread',
      value: mb / (count / 1000),
      unit: 'MB/s',
      limit: null,
    },
    {
      key: 'estimator-speedup',
      label: 'estimator ÷ exact throughput',
      value: count / estimate,
      unit: '×',
      limit: null,
    },
  );
}

// ---- one piece of 10 MiB ----------------------------------------------------------------------------
// A file of one character repeated, or of random letters, is a single pre-tokenizer piece, so merging
// must not be quadratic in a piece's length, nor slow where nothing repeats. Three files of the
// largest size a scan reads (MAX_FILE_BYTES), counted as a scan counts them (the compiled counter,
// in windows beyond 8 kB).
{
  const counter = createTokenCounter('o200k_base');
  const files: Array<[string, Uint8Array]> = [
    ['`x`', Buffer.alloc(10 * MiB, 'x')],
    ['`.`', Buffer.alloc(10 * MiB, '.')],
    ['random a-z', randomLetters(10 * MiB)],
  ];
  const speeds = files.map(([name, bytes]) => ({
    name,
    mbps: bytes.length / 1e6 / (measure(() => counter.countUtf8(bytes), 3).median / 1000),
  }));
  results.push({
    key: 'count-runs-mbps',
    label:
      'no file counts slower than 10 MB/s: three 10 MiB files of one piece, a run of `x`, a run of `.`, random lower-case letters (exact o200k, one thread; the slowest file)',
    value: Math.min(...speeds.map((s) => s.mbps)),
    unit: 'MB/s',
    limit: 10,
    atLeast: true,
    note: speeds.map((s) => `${s.name} ${s.mbps.toFixed(1)} MB/s`).join(', '),
  });
}

/** `length` lower-case letters, the same on every run (xorshift). */
function randomLetters(length: number): Uint8Array {
  const out = new Uint8Array(length);
  let state = 0x2545f491;
  for (let i = 0; i < length; i++) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    out[i] = 0x61 + ((state >>> 0) % 26);
  }
  return out;
}

// ---- content classification --------------------------------------------------------------------
/** Deterministic pseudo-random bytes (xorshift), optionally without NUL: as in the unit test. */
function noise(length: number, withoutNul: boolean): Uint8Array {
  const out = new Uint8Array(length);
  let state = 0x9e3779b9;
  for (let i = 0; i < length; i++) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    out[i] = withoutNul ? 1 + ((state >>> 0) % 255) : state & 0xff;
  }
  return out;
}

for (const withoutNul of [false, true]) {
  const bytes = noise(MiB, withoutNul);
  const m = measure(() => classifyContent('blob.unknownext', bytes));
  results.push({
    key: `classify-random-${withoutNul ? 'no-nul' : 'nul'}`,
    label: `classify 1 MB of random bytes ${withoutNul ? 'without' : 'with'} NUL (binary)`,
    value: m.median,
    unit: 'ms',
    limit: 250,
    note: `first call ${m.first.toFixed(1)} ms`,
  });
}
{
  const text = '# 한국어 문서\n\n이 문서는 인코딩 감지 성능을 확인하기 위한 한국어 마크다운 파일입니다.\n'.repeat(40);
  const utf8 = new TextEncoder().encode(text);
  const legacy = encodeLegacy(text, 'euc-kr');
  const m = measure(() => classifyContent('docs/ko.md', utf8));
  results.push({
    key: 'classify-korean-utf8',
    label: `classify a ${(utf8.length / 1024).toFixed(1)} KB Korean Markdown file, UTF-8 (a peer took 3.5 s)`,
    value: m.median,
    unit: 'ms',
    limit: 100,
    note: `first call ${m.first.toFixed(2)} ms`,
  });
  const l = measure(() => classifyContent('docs/ko.md', legacy));
  results.push({
    key: 'classify-korean-euc-kr',
    label: 'the same file in EUC-KR (charset detection and decoding)',
    value: l.median,
    unit: 'ms',
    limit: 500,
    note: `first call ${l.first.toFixed(1)} ms`,
  });
}
{
  const bytes = new TextEncoder().encode(
    'export const value = "héllo wörld 日本語"; // ünïcödé comment\n'.repeat(170_000),
  );
  const best = (fn: () => unknown) => Math.min(...[0, 1, 2, 3].map(() => time(fn)));
  const baseline = best(() => isUtf8(bytes) && Buffer.from(bytes.buffer).toString('utf8'));
  const measured = best(() => classifyContent('big.ts', bytes));
  results.push({
    key: 'classify-10mb-utf8',
    label: `classify ${(bytes.length / 1e6).toFixed(1)} MB of UTF-8 (limit: 3× isUtf8 + toString + 20 ms)`,
    value: measured,
    unit: 'ms',
    limit: baseline * 3 + 20,
    note: `isUtf8 + toString ${baseline.toFixed(1)} ms`,
  });
}

// ---- archives refused from the central directory ----------------------------------------------------
const LIMITS: ZipLimits = {
  maxEntries: 10_000,
  maxUncompressedBytes: 500 * MiB,
  maxRatio: 100,
  maxDepth: 50,
  maxNameBytes: 1024,
  maxComponentBytes: 255,
};

/** Time until extractZip refuses the archive with `code`, writing nothing. */
async function refusalMs(zipPath: string, name: string, code: string): Promise<number> {
  const dest = join(scratch, `dest-${name}`);
  await mkdir(dest, { recursive: true });
  const started = performance.now();
  const outcome = await extractZip({ zipPath, destDir: dest, limits: LIMITS }).then(
    () => 'extracted',
    (error: unknown) => String((error as { code?: unknown }).code),
  );
  const ms = performance.now() - started;
  if (outcome !== code) throw new Error(`${name}: expected a refusal with ${code}, got ${outcome}`);
  if ((await readdir(dest)).length > 0) throw new Error(`${name} left files behind`);
  return ms;
}

{
  const ratioBomb = join(scratch, 'ratio-bomb.zip');
  const many = join(scratch, 'many.zip');
  const craftStarted = performance.now();
  const answers = execFileSync('python3', [CRAFT_ZIP], {
    input: `${JSON.stringify({ out: ratioBomb, entries: [{ name: 'zeros.bin', zeros: 200 * MiB, method: 'deflated' }] })}\n${JSON.stringify({ out: many, many: 100_000 })}\n`,
    encoding: 'utf8',
  });
  if (answers.trim() !== 'ok\nok') throw new Error(`craft_zip.py: ${answers}`);
  const craftMs = performance.now() - craftStarted;

  const rssBefore = process.memoryUsage.rss();
  const bombMs = await refusalMs(ratioBomb, 'ratio', 'ARCHIVE_TOO_LARGE');
  const rssChange = (process.memoryUsage.rss() - rssBefore) / MiB;
  results.push({
    key: 'zip-ratio-bomb',
    label: 'refuse a ratio bomb (200 MiB of zeros deflated to ~200 kB)',
    value: bombMs,
    unit: 'ms',
    limit: 500,
    note: `RSS changed by ${rssChange >= 0 ? '+' : ''}${rssChange.toFixed(1)} MiB`,
  });
  results.push({
    key: 'zip-many-entries',
    label: 'refuse 100 000 entries from the end record',
    value: await refusalMs(many, 'many', 'TOO_MANY_ENTRIES'),
    unit: 'ms',
    limit: 250,
    note: `python3 built both zips in ${(craftMs / 1000).toFixed(1)} s`,
  });
}

process.stdout.write(`${JSON.stringify(results)}\n`);
