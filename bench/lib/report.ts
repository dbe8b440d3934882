// Turns samples into the results table, the targets with met/missed, and consistency
// checks (every reposcan path must count the same files and tokens as the tokenizer floor).
import type { Corpus } from './corpora.js';
import type { HealthLoad, SummaryLoad } from './load.js';
import type { Sample } from './scan-runs.js';
import type { IdleStreams } from './streams.js';
import { relativeRange, spread } from './stats.js';
import type { Spread } from './stats.js';

export interface MicroResult {
  key: string;
  label: string;
  value: number;
  unit: string;
  /** null: informational. */
  limit: number | null;
  atLeast?: boolean;
  note?: string;
}

interface RowDef {
  key: string;
  label: string;
  reposcan: boolean;
  warm: boolean;
}

/** Rescans after the cold scan on one worker: the warm row is the first; the series row checks memory stays flat over all. */
export const RESCANS_IN_A_ROW = 5;

export const ROWS: readonly RowDef[] = [
  { key: 'api-scan-cold', label: 'reposcan full scan (API + worker), cold', reposcan: true, warm: false },
  { key: 'api-scan-warm', label: 'reposcan rescan (API + worker), warm', reposcan: true, warm: true },
  {
    key: 'api-scan-series',
    label: `reposcan cold scan + ${RESCANS_IN_A_ROW} rescans on one worker (API + worker; time of all)`,
    reposcan: false,
    warm: false,
  },
  {
    key: 'api-clone-cold',
    label: 'reposcan full scan of a git URL (loopback clone), cold',
    reposcan: true,
    warm: false,
  },
  {
    key: 'api-clone-commit-cold',
    label:
      'reposcan full scan of a git URL (loopback clone of a copy that allows filters), cold, before a one-file commit',
    reposcan: true,
    warm: false,
  },
  {
    key: 'api-clone-commit-cached',
    label:
      'reposcan repeat scan of that git URL at the same commit, served by the commit cache (same API, worker and DATA_DIR)',
    reposcan: false,
    warm: false,
  },
  {
    key: 'api-clone-one-file-commit',
    label: 'reposcan rescan of that git URL after a commit that changes one file (same API, worker and DATA_DIR)',
    reposcan: false,
    warm: false,
  },
  {
    key: 'api-clone-later-commits',
    label:
      'reposcan rescans of that git URL after three more one-file commits, in a row after the digest (same API, worker and DATA_DIR)',
    reposcan: false,
    warm: false,
  },
  {
    key: 'api-clone-change-digest',
    label: 'reposcan change digest of that commit (base_ref = the commit before; same API, worker and DATA_DIR)',
    reposcan: false,
    warm: false,
  },
  {
    key: 'api-clone-change-digest-every-file',
    label:
      'reposcan change digest of a commit after it that changes every file (base_ref = the commit before; same API, worker and DATA_DIR)',
    reposcan: false,
    warm: false,
  },
  { key: 'api-inspect', label: 'reposcan inspect (API, local path)', reposcan: true, warm: false },
  {
    key: 'api-inspect-clone',
    label: 'reposcan inspect of the git URL (API, loopback clone)',
    reposcan: true,
    warm: false,
  },
  { key: 'engine-cold', label: 'reposcan engine, fresh process, cold', reposcan: true, warm: false },
  { key: 'engine-warm', label: 'reposcan engine, fresh process, warm', reposcan: true, warm: true },
  {
    key: 'engine-cold-secrets-off',
    label: 'reposcan engine, fresh process, cold, secrets off',
    reposcan: true,
    warm: false,
  },
  {
    key: 'engine-cold-parts',
    label: 'reposcan engine, fresh process, cold, in parts of 100 000 tokens',
    reposcan: true,
    warm: false,
  },
  {
    key: 'engine-warm-parts',
    label: 'reposcan engine, fresh process, warm, in parts of 100 000 tokens',
    reposcan: true,
    warm: true,
  },
  {
    key: 'engine-cold-compress',
    label: 'reposcan engine, fresh process, cold, compress=signatures',
    reposcan: false,
    warm: false,
  },
  { key: 'repomix-plain-cold', label: 'repomix 1.18.1 --style plain, cold', reposcan: false, warm: false },
  { key: 'repomix-plain-warm', label: 'repomix 1.18.1 --style plain, warm', reposcan: false, warm: true },
  { key: 'repomix-json-cold', label: 'repomix 1.18.1 --style json, cold', reposcan: false, warm: false },
  { key: 'repomix-json-warm', label: 'repomix 1.18.1 --style json, warm', reposcan: false, warm: true },
  {
    key: 'repomix-plain-secretlint-cold',
    label: 'repomix --style plain with its security check, cold',
    reposcan: false,
    warm: false,
  },
  { key: 'repomix-plain-compress-cold', label: 'repomix --style plain --compress, cold', reposcan: false, warm: false },
  { key: 'token-floor', label: 'tokenizer floor (count only, all cores)', reposcan: false, warm: false },
  {
    key: 'scan-floor',
    label:
      "count + write floor (the tokenizer floor while the main thread writes the three artifacts' bytes, hashed and synced)",
    reposcan: false,
    warm: false,
  },
  { key: 'read-floor', label: 'read floor (read every file once)', reposcan: false, warm: false },
];

export interface Row {
  corpus: string;
  key: string;
  label: string;
  wall_s: Spread;
  mb_per_s: number;
  /** Highest peak RSS over the runs. */
  peak_rss_mb: number | null;
  files: number | null;
  tokens: number | null;
  ratios: {
    repomix_plain: number | null;
    repomix_json: number | null;
    token_floor: number | null;
    read_floor: number | null;
  };
  samples: Sample[];
}

export interface Target {
  target: string;
  measured: string;
  value: number | null;
  limit: string;
  met: boolean | null;
}

export class Recorder {
  readonly samples = new Map<string, Sample[]>();

  add(corpus: Corpus, key: string, sample: Sample): void {
    const id = `${corpus.id}\u0000${key}`;
    const list = this.samples.get(id) ?? [];
    list.push(sample);
    this.samples.set(id, list);
  }

  get(corpus: Corpus, key: string): Sample[] {
    return this.samples.get(`${corpus.id}\u0000${key}`) ?? [];
  }
}

export function buildRows(recorder: Recorder, corpora: Corpus[]): Row[] {
  const rows: Row[] = [];
  for (const corpus of corpora) {
    const median = (key: string): number | null =>
      spread(recorder.get(corpus, key).map((s) => s.wallMs))?.median ?? null;
    const ratio = (a: number, key: string): number | null => {
      const b = median(key);
      return b === null || b === 0 ? null : a / b;
    };
    for (const def of ROWS) {
      const samples = recorder.get(corpus, def.key);
      const wall = spread(samples.map((s) => s.wallMs / 1000));
      if (!wall) continue;
      const rss = samples.map((s) => s.peakRssMb).filter((v): v is number => v !== null);
      const ms = wall.median * 1000;
      rows.push({
        corpus: corpus.id,
        key: def.key,
        label: def.label,
        wall_s: wall,
        mb_per_s: corpus.bytes / 1e6 / wall.median,
        peak_rss_mb: rss.length > 0 ? Math.max(...rss) : null,
        files: samples[0]?.files ?? null,
        tokens: samples[0]?.tokens ?? null,
        ratios: def.reposcan
          ? {
              repomix_plain: ratio(ms, def.warm ? 'repomix-plain-warm' : 'repomix-plain-cold'),
              repomix_json: ratio(ms, def.warm ? 'repomix-json-warm' : 'repomix-json-cold'),
              token_floor: ratio(ms, 'token-floor'),
              read_floor: ratio(ms, 'read-floor'),
            }
          : { repomix_plain: null, repomix_json: null, token_floor: null, read_floor: null },
        samples,
      });
    }
  }
  return rows;
}

export interface LoadResults {
  summary: SummaryLoad[];
  health: HealthLoad | null;
}

/** Idle event streams may cost the API at most this share of one core per 1 000 open. */
export const IDLE_STREAMS_CPU_PER_1000 = 2;

export function buildTargets(
  rows: Row[],
  ids: { real: string; real2x: string; synthetic: string },
  load: LoadResults | null,
  micro: MicroResult[] | null,
  streams: IdleStreams[] | null = null,
): Target[] {
  const row = (corpus: string, key: string) => rows.find((r) => r.corpus === corpus && r.key === key);
  const ratioTarget = (
    target: string,
    corpus: string,
    key: string,
    against: string,
    limit: number,
    strict = false,
  ): Target => {
    const a = row(corpus, key);
    const b = row(corpus, against);
    const value = a && b ? a.wall_s.median / b.wall_s.median : null;
    return {
      target,
      measured:
        value === null
          ? 'not measured'
          : `${value.toFixed(2)}× (${a?.wall_s.median.toFixed(2)} s ÷ ${b?.wall_s.median.toFixed(2)} s)`,
      value,
      limit: `${strict ? '<' : '≤'} ${limit}×`,
      met: value === null ? null : strict ? value < limit : value <= limit,
    };
  };
  const targets: Target[] = [
    ratioTarget('cold full scan ÷ repomix plain, cold', ids.real, 'api-scan-cold', 'repomix-plain-cold', 0.5),
    ratioTarget('cold full scan ÷ repomix json, cold', ids.real, 'api-scan-cold', 'repomix-json-cold', 0.25),
    ratioTarget('cold full scan ÷ tokenizer floor', ids.real, 'api-scan-cold', 'token-floor', 1.3),
    informational(
      ratioTarget(
        'count + write floor ÷ tokenizer floor (what no scan that writes the artifacts can go below) — informational',
        ids.real,
        'scan-floor',
        'token-floor',
        1.3,
      ),
    ),
    informational(
      ratioTarget('cold full scan ÷ count + write floor — informational', ids.real, 'api-scan-cold', 'scan-floor', 1.3),
    ),
    ratioTarget('warm rescan ÷ repomix plain, warm', ids.real, 'api-scan-warm', 'repomix-plain-warm', 0.5),
    ratioTarget(
      'rescan after a one-file commit ÷ cold scan of the git URL',
      ids.real,
      'api-clone-one-file-commit',
      'api-clone-commit-cold',
      0.2,
    ),
    informational(
      ratioTarget(
        'rescans after one-file commits in a row ÷ cold scan of the git URL — informational',
        ids.real,
        'api-clone-later-commits',
        'api-clone-commit-cold',
        0.2,
      ),
    ),
    ratioTarget(
      'cold engine, secrets redact (the default) ÷ cold engine, secrets off',
      ids.real,
      'engine-cold',
      'engine-cold-secrets-off',
      1.3,
    ),
    ratioTarget(
      'cold engine, in parts of 100 000 tokens ÷ cold engine',
      ids.real,
      'engine-cold-parts',
      'engine-cold',
      1.3,
    ),
    informational(
      ratioTarget(
        'warm engine, in parts of 100 000 tokens ÷ warm engine — informational',
        ids.real,
        'engine-warm-parts',
        'engine-warm',
        1.3,
      ),
    ),
    ratioTarget('cold engine, compress=signatures ÷ cold engine', ids.real, 'engine-cold-compress', 'engine-cold', 1.3),
    ratioTarget(
      'cold engine, compress=signatures ÷ repomix --compress, cold',
      ids.real,
      'engine-cold-compress',
      'repomix-plain-compress-cold',
      1,
      true,
    ),
  ];
  targets.push(commitCacheTarget(row(ids.real, 'api-clone-commit-cached')));
  const rss1 = row(ids.real, 'api-scan-cold')?.peak_rss_mb ?? null;
  const rss2 = row(ids.real2x, 'api-scan-cold')?.peak_rss_mb ?? null;
  targets.push({
    target: 'worker peak RSS, cold full scan',
    measured: rss1 === null ? 'not measured' : `${rss1.toFixed(0)} MB`,
    value: rss1,
    limit: '≤ 250 MB',
    met: rss1 === null ? null : rss1 <= 250,
  });
  const rssSeries = row(ids.real, 'api-scan-series')?.peak_rss_mb ?? null;
  targets.push({
    target: `worker peak RSS over a cold scan and ${RESCANS_IN_A_ROW} rescans in a row (flat memory on a long-lived worker)`,
    measured: rssSeries === null ? 'not measured' : `${rssSeries.toFixed(0)} MB`,
    value: rssSeries,
    limit: '≤ 250 MB',
    met: rssSeries === null ? null : rssSeries <= 250,
  });
  const growth = rss1 !== null && rss2 !== null ? rss2 / rss1 - 1 : null;
  targets.push({
    target: 'worker peak RSS on the corpus twice as big',
    measured:
      growth === null
        ? 'not measured'
        : `${rss2?.toFixed(0)} MB, ${growth >= 0 ? '+' : ''}${(growth * 100).toFixed(1)} %`,
    value: growth,
    limit: '≤ 250 MB and within ±10 %',
    met: growth === null || rss2 === null ? null : Math.abs(growth) <= 0.1 && rss2 <= 250,
  });
  targets.push(ratioTarget('inspect (local path) ÷ read floor', ids.real, 'api-inspect', 'read-floor', 2));
  targets.push(
    ratioTarget(
      'full scan of the many-small-files tree ÷ its read floor',
      ids.synthetic,
      'api-scan-cold',
      'read-floor',
      2,
      true,
    ),
  );

  if (load) {
    for (const s of load.summary) {
      const main = s === load.summary[0];
      targets.push({
        target: `GET /v1/summary/{id} throughput (${s.repo}, ${s.files} files, ${(s.summary_bytes / 1024).toFixed(0)} kB)${main ? '' : ' — informational'}`,
        measured: `${s.wrk.requests_per_sec.toFixed(0)} req/s`,
        value: s.wrk.requests_per_sec,
        limit: main ? '≥ 2000 req/s' : '—',
        met: main ? s.wrk.requests_per_sec >= 2000 && s.wrk.non_2xx === 0 && s.wrk.socket_errors === 0 : null,
      });
      targets.push({
        target: `GET /v1/summary/{id} p99 latency (${s.repo})${main ? '' : ' — informational'}`,
        measured: `${s.wrk.latency_ms.p99.toFixed(1)} ms (p50 ${s.wrk.latency_ms.p50.toFixed(1)} ms)`,
        value: s.wrk.latency_ms.p99,
        limit: main ? '< 25 ms' : '—',
        met: main ? s.wrk.latency_ms.p99 < 25 : null,
      });
    }
    if (load.health) {
      const h = load.health;
      targets.push({
        target: `GET /health p99 latency while ${h.workers} workers run heavy scans`,
        measured: `${h.wrk.latency_ms.p99.toFixed(1)} ms (p50 ${h.wrk.latency_ms.p50.toFixed(1)} ms, ${h.wrk.requests_per_sec.toFixed(0)} req/s; both workers busy in ${(h.both_busy_share * 100).toFixed(0)} % of polls)`,
        value: h.wrk.latency_ms.p99,
        limit: '< 25 ms',
        met: h.wrk.latency_ms.p99 < 25 && h.wrk.non_2xx === 0,
      });
    }
  }
  for (const s of streams ?? []) {
    const perCore = s.cpu_percent_per_1000 > 0 ? (100 / s.cpu_percent_per_1000) * 1000 : null;
    targets.push({
      target: `${s.streams} idle event streams on ${s.scans === 1 ? 'one queued scan' : s.scans === s.streams ? 'as many queued scans (one each)' : `${s.scans} queued scans`}: API CPU per 1 000 streams`,
      measured:
        `${s.cpu_percent_per_1000.toFixed(2)} % of a core (${s.cpu_percent.toFixed(1)} % over ${s.seconds} s, ${s.baseline_cpu_percent.toFixed(1)} % with none open` +
        `${perCore === null ? '' : `; about ${fmt(perCore)} streams per core`}; +${s.rss_added_mb.toFixed(0)} MB RSS)`,
      value: s.cpu_percent_per_1000,
      limit: `≤ ${IDLE_STREAMS_CPU_PER_1000} %`,
      met: s.cpu_percent_per_1000 <= IDLE_STREAMS_CPU_PER_1000,
    });
  }
  for (const m of micro ?? []) {
    if (m.limit === null) continue;
    targets.push({
      target: m.label,
      measured: `${fmt(m.value)} ${m.unit}${m.note ? ` (${m.note})` : ''}`,
      value: m.value,
      limit: `${m.atLeast ? '≥' : '<'} ${fmt(m.limit)} ${m.unit}`,
      met: m.atLeast ? m.value >= m.limit : m.value < m.limit,
    });
  }
  return targets;
}

/** What a repeat scan served by the commit cache may take, request to 201, beyond resolving the ref with `git ls-remote`. */
export const COMMIT_CACHE_LIMIT_MS = 100;

/** The repeat scan's time less the `git ls-remote` timed right after it (`extra.ls_remote_ms`), median over the runs. */
export function commitCacheTarget(cached: Row | undefined): Target {
  const runs = (cached?.samples ?? []).flatMap((s) =>
    typeof s.extra?.ls_remote_ms === 'number' ? [{ wall: s.wallMs, lsRemote: s.extra.ls_remote_ms }] : [],
  );
  const net = spread(runs.map((r) => r.wall - r.lsRemote));
  const lsRemote = spread(runs.map((r) => r.lsRemote));
  return {
    target: 'repeat scan of a commit already scanned (commit cache), request to 201, less one git ls-remote',
    measured:
      net === null || lsRemote === null || cached === undefined
        ? 'not measured'
        : `${net.median.toFixed(0)} ms (${(cached.wall_s.median * 1000).toFixed(0)} ms, ls-remote ${lsRemote.median.toFixed(0)} ms)`,
    value: net?.median ?? null,
    limit: `≤ ${COMMIT_CACHE_LIMIT_MS} ms`,
    met: net === null ? null : net.median <= COMMIT_CACHE_LIMIT_MS,
  };
}

/** A ratio shown for information: no limit, never met or missed. */
function informational(target: Target): Target {
  return { ...target, limit: '—', met: null };
}

/** Every reposcan path and the tokenizer floors must agree on files and tokens per corpus; repomix must see the tree. */
export function consistencyChecks(rows: Row[]): string[] {
  const problems: string[] = [];
  const agreeing = [
    'api-scan-cold',
    'api-scan-warm',
    'api-clone-cold',
    'api-clone-commit-cold',
    'api-clone-commit-cached',
    'engine-cold',
    'engine-warm',
    'engine-cold-secrets-off',
    'engine-cold-parts',
    'engine-warm-parts',
    'token-floor',
    'scan-floor',
  ];
  for (const corpus of new Set(rows.map((r) => r.corpus))) {
    const group = rows.filter((r) => r.corpus === corpus && agreeing.includes(r.key));
    for (const field of ['tokens', 'files'] as const) {
      // The floors count textual files only; total_files includes assets.
      const members = field === 'files' ? group.filter((r) => !r.key.endsWith('-floor')) : group;
      const values = new Set(members.flatMap((r) => r.samples.map((s) => s[field])).filter((v) => v !== undefined));
      if (values.size > 1) {
        problems.push(
          `${corpus}: ${field} differ between runs: ${members.map((r) => `${r.key} ${r.samples.map((s) => s[field]).join('/')}`).join(', ')}`,
        );
      }
    }
  }
  problems.push(...oneFileCommitChecks(rows));
  // repomix must see the same tree (it packs text files only; reposcan's count includes assets).
  for (const corpus of new Set(rows.map((r) => r.corpus))) {
    const ours = rows.find((r) => r.corpus === corpus && r.key === 'engine-cold')?.files;
    for (const r of rows.filter((x) => x.corpus === corpus && x.key.startsWith('repomix-'))) {
      if (ours && (r.files ?? 0) < ours * 0.9)
        problems.push(`${corpus}: ${r.key} packed ${r.files ?? 0} files, reposcan scanned ${ours}: not the same tree`);
    }
  }
  return problems;
}

/**
 * After the one-file commit, the rescan must still cover the whole commit (the same files as the
 * cold scan before it, and the added line's tokens on top), and the change digest must hold that
 * one modified file and nothing else; the digest of the commit that changes every file, every file
 * the cold scan kept: a fast row that scanned less would be no measurement.
 */
function oneFileCommitChecks(rows: Row[]): string[] {
  const problems: string[] = [];
  for (const corpus of new Set(rows.map((r) => r.corpus))) {
    const row = (key: string) => rows.find((r) => r.corpus === corpus && r.key === key);
    const cold = row('api-clone-commit-cold');
    for (const s of row('api-clone-one-file-commit')?.samples ?? []) {
      if (cold && s.files !== cold.files)
        problems.push(
          `${corpus}: the rescan after a one-file commit scanned ${s.files} files, the cold scan ${cold.files}`,
        );
      if (cold?.tokens != null && s.tokens !== undefined && s.tokens <= cold.tokens)
        problems.push(
          `${corpus}: the rescan after a one-file commit counted ${s.tokens} tokens, not more than the cold scan's ${cold.tokens}`,
        );
    }
    for (const s of row('api-clone-change-digest')?.samples ?? []) {
      const c = s.extra?.changes as Partial<Record<'added' | 'modified' | 'renamed' | 'deleted', number>> | undefined;
      if (!c || c.modified !== 1 || c.added !== 0 || c.renamed !== 0 || c.deleted !== 0)
        problems.push(
          `${corpus}: the change digest of a one-file commit should hold one modified file, it held ${c ? JSON.stringify(c) : 'no changes'}`,
        );
    }
    for (const s of row('api-clone-change-digest-every-file')?.samples ?? []) {
      const c = s.extra?.changes as Partial<Record<'added' | 'modified' | 'renamed' | 'deleted', number>> | undefined;
      if (!c || c.modified !== cold?.files || c.added !== 0 || c.renamed !== 0 || c.deleted !== 0)
        problems.push(
          `${corpus}: the change digest of a commit that changes every file should hold the cold scan's ${cold?.files} files as modified, it held ${c ? JSON.stringify(c) : 'no changes'}`,
        );
    }
  }
  return problems;
}

function fmt(n: number): string {
  return n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2);
}

const ratio = (v: number | null): string => (v === null ? '' : `${v.toFixed(2)}×`);

export function renderMarkdown(options: {
  title: string;
  environment: string[];
  corpora: Corpus[];
  rows: Row[];
  targets: Target[];
  load: LoadResults | null;
  streams?: IdleStreams[] | null;
  micro: MicroResult[] | null;
  checks: string[];
  notes: string[];
  /** Tables of sections with rows of their own (CLI start-up), as markdown lines, before the targets. */
  extraTables?: string[];
}): string {
  const out: string[] = [`## ${options.title}`, '', ...options.environment.map((e) => `- ${e}`), ''];
  // A run of sections that use no corpus (streams) has neither table.
  if (options.corpora.length > 0) {
    out.push('| corpus | files | MB | what |', '|---|---:|---:|---|');
    for (const c of options.corpora)
      out.push(`| ${c.id} | ${c.files} | ${(c.bytes / 1e6).toFixed(1)} | ${c.description} |`);
    out.push('');
  }
  if (options.rows.length > 0) {
    out.push(
      '| run | corpus | n | median s (min–max) | MB/s | peak RSS MB | files | tokens | ÷ repomix plain | ÷ repomix json | ÷ token floor | ÷ read floor |',
    );
    out.push('|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  }
  for (const r of options.rows) {
    const w = r.wall_s;
    out.push(
      `| ${r.label} | ${r.corpus} | ${w.n} | ${w.median.toFixed(2)} (${w.min.toFixed(2)}–${w.max.toFixed(2)}) | ${r.mb_per_s.toFixed(1)} | ${r.peak_rss_mb === null ? '' : r.peak_rss_mb.toFixed(0)} | ${r.files ?? ''} | ${r.tokens ?? ''} | ${ratio(r.ratios.repomix_plain)} | ${ratio(r.ratios.repomix_json)} | ${ratio(r.ratios.token_floor)} | ${ratio(r.ratios.read_floor)} |`,
    );
  }
  if (options.rows.length > 0) out.push('');
  out.push(...(options.extraTables ?? []));
  out.push('| target | measured | limit | |', '|---|---|---|---|');
  for (const t of options.targets)
    out.push(`| ${t.target} | ${t.measured} | ${t.limit} | ${t.met === null ? '' : t.met ? 'met' : '**missed**'} |`);
  out.push('');
  const informational = (options.micro ?? []).filter((m) => m.limit === null);
  if (informational.length > 0) {
    for (const m of informational) out.push(`- ${m.label}: ${fmt(m.value)} ${m.unit}`);
    out.push('');
  }
  if (options.load) {
    out.push(
      '| load (wrk) | req/s | p50 ms | p90 ms | p99 ms | requests | errors |',
      '|---|---:|---:|---:|---:|---:|---:|',
    );
    const line = (label: string, w: SummaryLoad['wrk']) =>
      `| ${label} | ${w.requests_per_sec.toFixed(0)} | ${w.latency_ms.p50.toFixed(1)} | ${w.latency_ms.p90.toFixed(1)} | ${w.latency_ms.p99.toFixed(1)} | ${w.requests} | ${w.non_2xx + w.socket_errors} |`;
    for (const s of options.load.summary)
      out.push(
        line(
          `GET /v1/summary (${s.repo}, ${s.files} files), ${s.wrk.seconds} s, ${s.wrk.connections} connections`,
          s.wrk,
        ),
      );
    if (options.load.health) {
      const h = options.load.health;
      out.push(
        line(
          `GET /health while ${h.workers} workers scan (${h.scans_completed} scans finished meanwhile), ${h.wrk.seconds} s, ${h.wrk.connections} connections`,
          h.wrk,
        ),
      );
    }
    out.push('');
  }
  if (options.streams && options.streams.length > 0) {
    out.push(
      `- Idle event streams: the built API alone on Redis (no worker, so every scan stays queued); one client opens every stream and reads its first event, then the API's user + system CPU is read from \`/proc/<pid>/stat\` over ${options.streams[0]?.seconds ?? 0} s (and over the same window before any stream opened). Per 1 000 streams: that CPU, the idle process's own share included, ÷ streams × 1 000.`,
    );
  }
  for (const n of options.notes) out.push(`- ${n}`);
  for (const c of options.checks) out.push(`- **check failed:** ${c}`);
  return `${out.join('\n')}\n`;
}

/** The spread of each row as one line, to judge how noisy the machine was. */
export function noiseSummary(rows: Row[]): string {
  const spreads = rows.filter((r) => r.wall_s.n > 1).map((r) => relativeRange(r.wall_s));
  if (spreads.length === 0) return 'one run per row: no spread to report';
  const s = spread(spreads) as Spread;
  return `(max − min) ÷ median per row: median ${(s.median * 100).toFixed(0)} %, worst ${(s.max * 100).toFixed(0)} %`;
}
