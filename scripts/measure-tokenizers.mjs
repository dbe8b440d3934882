// Measures the BPE tokenizers reposcan could use, single-threaded, on a real corpus (the installed
// node_modules, pinned by package-lock, plus the Python standard library when present), and checks
// that each one agrees with js-tiktoken (the reference) on every file, special tokens counted as text.
//
//   node --import tsx --conditions=source scripts/measure-tokenizers.mjs [--encoding o200k_base|cl100k_base] [--mb 6] [--only a,b] [--pool]
//
// Each candidate runs in a fresh child process so that init time, RSS and merge-cache state are its own.
// Times are the child's CPU time (user + system), which other load on a shared machine disturbs far
// less than wall time. Groups run in order, then `gen` and `py` run again in the same process: that
// second pass is the state of a long-lived worker (gpt-tokenizer's full LRU merge cache, see
// performance-and-peers §4.5).
//
// --pool instead measures the TokenPool as built (packages/core/dist; `npm run build` first):
// two worker threads, their load time and the RSS they add, then the whole corpus in batches of at
// most 50 files or 1 MB: wall-clock throughput and the process's peak RSS.
/* global console, process, performance, setInterval, clearInterval, setTimeout */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { extname, join, relative } from 'node:path';
import { fileURLToPath, URL } from 'node:url';
import { Buffer } from 'node:buffer';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const MAX_FILE_BYTES = 2 * 1024 * 1024;
const GROUPS = ['ts', 'js', 'json', 'md', 'py', 'gen'];
const SECOND_PASS = ['gen', 'py'];
// How often the bounded variants drop their merge cache: never more entries than this many chars.
const RESET_CHARS = 100_000;

const CANDIDATES = {
  'js-tiktoken': async (enc) => {
    const { Tiktoken } = await import('js-tiktoken/lite');
    const t = new Tiktoken((await import(`js-tiktoken/ranks/${enc}`)).default);
    return (s) => t.encode(s, [], []).length;
  },
  'gpt-tokenizer': async (enc) => {
    const api = (await import(`gpt-tokenizer/encoding/${enc}`)).default;
    const opts = { disallowedSpecial: new Set() };
    return (s) => api.countTokens(s, opts);
  },
  'gpt-tokenizer cache=0': async (enc) => {
    const api = (await import(`gpt-tokenizer/encoding/${enc}`)).default;
    api.setMergeCacheSize(0);
    const opts = { disallowedSpecial: new Set() };
    return (s) => api.countTokens(s, opts);
  },
  'gpt-tokenizer clear/100k chars': async (enc) => {
    const api = (await import(`gpt-tokenizer/encoding/${enc}`)).default;
    const opts = { disallowedSpecial: new Set() };
    let since = 0;
    return (s) => {
      if (since > RESET_CHARS) {
        api.clearMergeCache();
        since = 0;
      }
      since += s.length;
      return api.countTokens(s, opts);
    };
  },
  'ai-tokenizer': async (enc) => {
    const { Tokenizer } = await import('ai-tokenizer');
    const data = await import(`ai-tokenizer/encoding/${enc}`);
    // No special tokens: everything is ordinary text. The vocabulary as shipped is a plain object, so
    // `toString`, `valueOf`, `__proto__` … resolve to Object.prototype members (miscounted as 1 token).
    const t = new Tokenizer({ ...data, special_tokens: {} });
    return (s) => t.count(s);
  },
  'ai-tokenizer null-proto renew/100k chars': async (enc) => {
    const { Tokenizer } = await import('ai-tokenizer');
    const data = await import(`ai-tokenizer/encoding/${enc}`);
    const fixed = {
      ...data,
      special_tokens: {},
      stringEncoder: Object.assign(Object.create(null), data.stringEncoder),
    };
    let t = new Tokenizer(fixed);
    let since = 0;
    return (s) => {
      if (since > RESET_CHARS) {
        t = new Tokenizer(fixed);
        since = 0;
      }
      since += s.length;
      return t.count(s);
    };
  },
  'reposcan bpe-engine': async (enc) => {
    const { createBpeCount, loadBpeTables } = await import('../packages/core/src/tokens/bpe-engine.js');
    return createBpeCount(loadBpeTables(enc));
  },
  // What a scan runs: files arrive as bytes, and ASCII text is split into pieces on them (the time
  // includes encoding each string back to UTF-8 first).
  'reposcan bpe-engine (UTF-8 bytes)': async (enc) => {
    const { createBpeCounter, loadBpeTables } = await import('../packages/core/src/tokens/bpe-engine.js');
    const { countUtf8 } = createBpeCounter(loadBpeTables(enc));
    return (s) => countUtf8(Buffer.from(s, 'utf8'));
  },
  // The same bytes through the compiled counter (assembly/bpe-count.ts), as the scans count them.
  'reposcan compiled (UTF-8 bytes)': async (enc) => {
    const { loadBpeTables } = await import('../packages/core/src/tokens/bpe-engine.js');
    const { wasmCounter } = await import('../packages/core/src/tokens/bpe-wasm.js');
    const counter = wasmCounter(loadBpeTables(enc));
    if (counter === null) throw new Error('no WebAssembly here');
    return (s) => counter.countUtf8(Buffer.from(s, 'utf8'));
  },
  'tiktoken (WASM)': async (enc) => {
    const { get_encoding } = await import('tiktoken');
    const t = get_encoding(enc);
    return (s) => t.encode_ordinary(s).length;
  },
};

function walk(dir, out) {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries) {
    // Dot folders hold caches other tools rewrite (node_modules/.vite), not pinned content.
    if (e.name.startsWith('.')) continue;
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else if (e.isFile()) out.push(p);
  }
}

/** Which corpus group a file belongs to, or null; minified JS and source maps form the `gen` group. */
function groupOf(path, text) {
  const ext = extname(path);
  if (ext === '.map' || /\.min\.[cm]?js$/.test(path)) return 'gen';
  if (['.js', '.mjs', '.cjs'].includes(ext)) {
    const lines = text.split('\n').length;
    return text.length / lines > 300 ? 'gen' : 'js';
  }
  if (['.ts', '.mts', '.cts'].includes(ext)) return 'ts';
  if (ext === '.json') return 'json';
  if (ext === '.md') return 'md';
  if (ext === '.py') return 'py';
  return null;
}

/** A deterministic spread of files per group, up to `mb` MB each: sorted paths, then a fixed stride. */
function buildManifest(mb) {
  const paths = [];
  walk(join(ROOT, 'node_modules'), paths);
  walk('/usr/lib/python3.11', paths);
  paths.sort();
  const byGroup = Object.fromEntries(GROUPS.map((g) => [g, []]));
  for (const p of paths) {
    const size = statSync(p).size;
    if (size === 0 || size > MAX_FILE_BYTES) continue;
    const text = readFileSync(p, 'utf8');
    const g = groupOf(p, text);
    if (g) byGroup[g].push({ path: p, size });
  }
  const manifest = {};
  for (const g of GROUPS) {
    const files = byGroup[g];
    const total = files.reduce((a, f) => a + f.size, 0);
    const stride = Math.max(1, Math.floor(total / (mb * 1e6)));
    manifest[g] = files.filter((_, i) => i % stride === 0).map((f) => f.path);
  }
  return manifest;
}

function cpuMs() {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

async function child(name, enc, manifestPath) {
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
  const texts = Object.fromEntries(GROUPS.map((g) => [g, manifest[g].map((p) => readFileSync(p, 'utf8'))]));
  globalThis.gc?.();
  const rssBefore = process.memoryUsage().rss;
  const t0 = cpuMs();
  const count = await CANDIDATES[name](enc);
  count('warm up');
  const initMs = cpuMs() - t0;
  globalThis.gc?.();
  const rssLoaded = process.memoryUsage().rss;
  const result = {
    name,
    initMs,
    rssLoadedMB: rssLoaded / 1e6,
    rssAddedMB: (rssLoaded - rssBefore) / 1e6,
    groups: {},
    again: {},
  };
  const run = (g) => {
    let chars = 0;
    let bytes = 0;
    const counts = [];
    const t = cpuMs();
    for (const s of texts[g]) {
      counts.push(count(s));
      chars += s.length;
    }
    const ms = cpuMs() - t;
    for (const s of texts[g]) bytes += Buffer.byteLength(s);
    return { ms, chars, bytes, files: counts.length, tokens: counts.reduce((a, b) => a + b, 0), counts };
  };
  for (const g of GROUPS) result.groups[g] = run(g);
  for (const g of SECOND_PASS) {
    const { ms, bytes, tokens } = run(g);
    result.again[g] = { ms, bytes, tokens };
  }
  result.maxRssMB = process.resourceUsage().maxRSS / 1e3;
  process.stdout.write(JSON.stringify(result));
}

async function childPool(enc, manifestPath) {
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
  // The worker takes UTF-8 bytes, as the engine sends them.
  const contents = GROUPS.flatMap((g) => manifest[g].map((p) => new Uint8Array(readFileSync(p))));
  const mb = contents.reduce((sum, c) => sum + c.length, 0) / 1e6;
  const batches = [];
  let batch = [];
  let bytes = 0;
  for (const c of contents) {
    batch.push(c);
    bytes += c.length;
    if (batch.length === 50 || bytes >= 1e6) {
      batches.push(batch);
      batch = [];
      bytes = 0;
    }
  }
  if (batch.length > 0) batches.push(batch);
  globalThis.gc?.();
  const rssBefore = process.memoryUsage().rss;
  let peak = rssBefore;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10);

  const { createTokenPool } = await import(new URL('../packages/core/dist/index.js', import.meta.url).href);
  const pool = createTokenPool({ encoding: enc, threads: 2 });
  const t0 = performance.now();
  await pool.warm();
  const warmMs = performance.now() - t0;
  await new Promise((resolve) => setTimeout(resolve, 200));
  const rssWarm = process.memoryUsage().rss;

  const t1 = performance.now();
  const cpu1 = cpuMs();
  let tokens = 0;
  for (const counts of await Promise.all(batches.map((items) => pool.count(items))))
    tokens += counts.reduce((a, b) => a + b, 0);
  const wallMs = performance.now() - t1;
  const cpu = cpuMs() - cpu1;
  clearInterval(sampler);
  await pool.close();
  process.stdout.write(
    JSON.stringify({
      mb,
      batches: batches.length,
      tokens,
      warmMs,
      rssBeforeMB: rssBefore / 1e6,
      rssWarmMB: rssWarm / 1e6,
      peakMB: peak / 1e6,
      maxRssMB: process.resourceUsage().maxRSS / 1e3,
      wallMs,
      cpuMs: cpu,
    }),
  );
}

function arg(flag, fallback) {
  const i = process.argv.indexOf(flag);
  return i === -1 ? fallback : process.argv[i + 1];
}

async function main() {
  const enc = arg('--encoding', 'o200k_base');
  const mb = Number(arg('--mb', '6'));
  const only = arg('--only', Object.keys(CANDIDATES).join(',')).split(',');
  const names = ['js-tiktoken', ...only.filter((n) => n !== 'js-tiktoken')];
  const manifest = buildManifest(mb);
  const dir = mkdtempSync(join(tmpdir(), 'measure-tokenizers-'));
  const manifestPath = join(dir, 'manifest.json');
  writeFileSync(manifestPath, JSON.stringify(manifest));
  if (process.argv.includes('--pool')) {
    try {
      const out = execFileSync(
        process.execPath,
        [...process.execArgv, '--expose-gc', fileURLToPath(import.meta.url), '--child-pool', enc, manifestPath],
        {
          stdio: ['ignore', 'pipe', 'inherit'],
        },
      );
      const r = JSON.parse(out.toString());
      console.log(`\nTokenPool worker, 2 threads, encoding ${enc}, Node ${process.version}`);
      console.log(`corpus ${r.mb.toFixed(1)} MB in ${r.batches} batches, ${r.tokens} tokens`);
      console.log(
        `load (spawn + tables) ${r.warmMs.toFixed(0)} ms; RSS ${r.rssBeforeMB.toFixed(0)} MB before, +${(r.rssWarmMB - r.rssBeforeMB).toFixed(0)} MB once warm`,
      );
      console.log(
        `counting: ${(r.mb / (r.wallMs / 1e3)).toFixed(1)} MB/s wall, ${(r.mb / (r.cpuMs / 1e3)).toFixed(1)} MB/s per CPU-second; peak RSS ${r.peakMB.toFixed(0)} MB sampled, ${r.maxRssMB.toFixed(0)} MB max (corpus strings included)`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    return;
  }
  const results = [];
  try {
    for (const name of names) {
      process.stderr.write(`${name} …\n`);
      const out = execFileSync(
        process.execPath,
        [...process.execArgv, '--expose-gc', fileURLToPath(import.meta.url), '--child', name, enc, manifestPath],
        {
          maxBuffer: 1 << 28,
          stdio: ['ignore', 'pipe', 'inherit'],
        },
      );
      results.push(JSON.parse(out.toString()));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  const ref = results[0];
  const mbps = (r) => (r.bytes / 1e6 / (r.ms / 1e3)).toFixed(1);
  console.log(`\nencoding ${enc}, Node ${process.version}, single thread, MB/s of CPU time; MB = 1e6 UTF-8 bytes\n`);
  console.log(`| group | files | MB | tokens (js-tiktoken) |\n|---|---|---|---|`);
  for (const g of GROUPS) {
    const r = ref.groups[g];
    console.log(`| ${g} | ${r.files} | ${(r.bytes / 1e6).toFixed(1)} | ${r.tokens} |`);
  }
  console.log(
    `\n| tokenizer | ${GROUPS.join(' | ')} | ${SECOND_PASS.map((g) => `${g} again`).join(' | ')} | init ms | RSS added MB | peak RSS MB | files ≠ js-tiktoken |`,
  );
  console.log(`|---|${GROUPS.map(() => '---|').join('')}${SECOND_PASS.map(() => '---|').join('')}---|---|---|---|`);
  for (const r of results) {
    const mismatches = [];
    for (const g of GROUPS) {
      r.groups[g].counts.forEach((c, i) => {
        const want = ref.groups[g].counts[i];
        if (c !== want) mismatches.push(`${relative(ROOT, manifest[g][i])} (${c} vs ${want})`);
      });
    }
    r.mismatches = mismatches;
    console.log(
      `| ${r.name} | ${GROUPS.map((g) => mbps(r.groups[g])).join(' | ')} | ${SECOND_PASS.map((g) => mbps(r.again[g])).join(' | ')} | ` +
        `${r.initMs.toFixed(0)} | ${r.rssAddedMB.toFixed(0)} | ${r.maxRssMB.toFixed(0)} | ${mismatches.length} |`,
    );
  }
  for (const r of results) {
    if (r.mismatches.length === 0) continue;
    console.log(`\n${r.name}: ${r.mismatches.length} files differ from js-tiktoken, e.g.`);
    for (const m of r.mismatches.slice(0, 10)) console.log(`  ${m}`);
  }
}

if (process.argv[2] === '--child') await child(process.argv[3], process.argv[4], process.argv[5]);
else if (process.argv[2] === '--child-pool') await childPool(process.argv[3], process.argv[4]);
else await main();
