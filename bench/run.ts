// `npm run bench`: builds, prepares the pinned corpora, then measures reposcan against repomix and
// against two floors (reading every file; counting every token on every core), the API under load,
// and the micro-benchmarks that used to be timing assertions in unit tests. Prints a table and
// writes it, with every sample, to bench/results/.
//
//   npm run bench                 full run: 5 repetitions, the 71 MB / 50 000-file corpora, 30 s wrk runs
//   npm run bench -- --quick      1 repetition, 14 MB / 5 000-file corpora, 5 s wrk runs (harness development)
//   options: --reps N, --sections real,real2x,synthetic,rescan,load,streams,micro,cli,throughput,fleet, --no-build
import { execFile, execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startGitHttpServer } from '../packages/sources/test/remote/helpers/git-http-server.js';
import { ensureBenchDeps } from './lib/bench-deps.js';
import { cliStartup, cliTargets, renderCliStartup } from './lib/cli-startup.js';
import { cloneRescanRun } from './lib/clone-rescan.js';
import type { CliStartup } from './lib/cli-startup.js';
import type { BenchDeps } from './lib/bench-deps.js';
import { BENCH_DIR, prepareCorpora, REPO_ROOT } from './lib/corpora.js';
import type { Corpora, Corpus } from './lib/corpora.js';
import { healthUnderScans, summaryLoad } from './lib/load.js';
import { preflight } from './lib/preflight.js';
import { idleStreams } from './lib/streams.js';
import { renderThroughput, SETUPS, throughput, throughputTargets } from './lib/throughput.js';
import type { Throughput } from './lib/throughput.js';
import { fleet, renderFleet } from './lib/fleet.js';
import type { Fleet } from './lib/fleet.js';
import type { IdleStreams } from './lib/streams.js';
import { Progress } from './lib/progress.js';
import {
  buildRows,
  buildTargets,
  consistencyChecks,
  noiseSummary,
  Recorder,
  renderMarkdown,
  RESCANS_IN_A_ROW,
} from './lib/report.js';
import type { LoadResults, MicroResult } from './lib/report.js';
import {
  apiScanRuns,
  engineRuns,
  inspectRun,
  readFloor,
  repomixRun,
  scanFloor,
  tokenFloor,
  writeWarmupTree,
} from './lib/scan-runs.js';
import type { Sample } from './lib/scan-runs.js';

const run = promisify(execFile);
const SECTIONS = [
  'real',
  'real2x',
  'synthetic',
  'rescan',
  'load',
  'streams',
  'micro',
  'cli',
  'throughput',
  'fleet',
] as const;
type Section = (typeof SECTIONS)[number];

interface Args {
  quick: boolean;
  reps: number;
  sections: Set<Section>;
  build: boolean;
}

function parseArgs(argv: string[]): Args {
  const value = (flag: string): string | undefined => {
    const i = argv.indexOf(flag);
    return i === -1 ? undefined : argv[i + 1];
  };
  const quick = argv.includes('--quick');
  const reps = Number(value('--reps') ?? (quick ? 1 : 5));
  if (!Number.isInteger(reps) || reps < 1) throw new Error('--reps takes a whole number ≥ 1');
  const sections = new Set((value('--sections') ?? SECTIONS.join(',')).split(',') as Section[]);
  for (const s of sections)
    if (!SECTIONS.includes(s)) throw new Error(`unknown section ${s}; known: ${SECTIONS.join(', ')}`);
  return { quick, reps, sections, build: !argv.includes('--no-build') };
}

/** Each throughput setup runs this often (it takes 10–20 s a run). */
const throughputReps = (args: Args): number => Math.min(args.reps, 3);

/** One step of a repetition: a tool (or a cold/warm pair of it) on one corpus. */
interface Unit {
  label: string;
  /** Repetitions this unit takes part in (the costly one-off rows run once). */
  reps: number;
  run: () => Promise<string>;
}

/** Idle event streams: many on one scan (one watcher for all), and one per scan (a watcher each). */
const STREAM_RUNS = [
  { streams: 2000, scans: 1 },
  { streams: 2000, scans: 2000 },
] as const;

const describe = (s: Sample): string =>
  `${(s.wallMs / 1000).toFixed(2)} s${s.peakRssMb === null ? '' : `, ${s.peakRssMb.toFixed(0)} MB`}`;

function unitsFor(
  corpus: Corpus,
  kind: 'real' | 'real2x' | 'synthetic',
  ctx: { deps: BenchDeps; recorder: Recorder; repomixHome: string; gitUrl: string },
): Unit[] {
  const { deps, recorder, repomixHome } = ctx;
  const record = (key: string, sample: Sample): string => {
    recorder.add(corpus, key, sample);
    return `${key} ${describe(sample)}`;
  };
  const engine = (warm: boolean): Unit => ({
    label: `engine ${warm ? 'cold + warm' : 'cold'}`,
    reps: Infinity,
    run: async () => {
      const r = await engineRuns(corpus, warm);
      return [record('engine-cold', r.cold), ...(r.warm ? [record('engine-warm', r.warm)] : [])].join('; ');
    },
  });
  const apiScan = (warm: boolean): Unit => ({
    label: `API full scan ${warm ? `cold + ${RESCANS_IN_A_ROW} warm in a row` : 'cold'}`,
    reps: Infinity,
    run: async () => {
      const runs = await apiScanRuns(Array<string>(warm ? 1 + RESCANS_IN_A_ROW : 1).fill(corpus.root));
      const [cold, again] = runs as [Sample, Sample | undefined];
      if (!again) return record('api-scan-cold', cold);
      // The warm row is the first rescan; the series row holds the worker's highest peak over all of them.
      const peaks = runs.map((r) => r.peakRssMb).filter((v): v is number => v !== null);
      const series: Sample = {
        wallMs: runs.reduce((sum, r) => sum + r.wallMs, 0),
        peakRssMb: peaks.length === runs.length ? Math.max(...peaks) : null,
        files: cold.files,
        tokens: cold.tokens,
        extra: {
          scans: runs.length,
          wall_ms: runs.map((r) => Math.round(r.wallMs)),
          peak_rss_mb: runs.map((r) => r.peakRssMb),
        },
      };
      return [record('api-scan-cold', cold), record('api-scan-warm', again), record('api-scan-series', series)].join(
        '; ',
      );
    },
  });
  const repomix = (style: 'plain' | 'json', warm: boolean, reps = Infinity): Unit => ({
    label: `repomix ${style} ${warm ? 'cold + warm' : 'cold'}`,
    reps,
    run: async () => {
      const cold = record(`repomix-${style}-cold`, await repomixRun(deps, corpus, style, repomixHome, true));
      return warm
        ? `${cold}; ${record(`repomix-${style}-warm`, await repomixRun(deps, corpus, style, repomixHome, false))}`
        : cold;
    },
  });
  const floors = { 'read-floor': readFloor, 'token-floor': tokenFloor, 'scan-floor': scanFloor };
  const floor = (key: keyof typeof floors): Unit => ({
    label: key,
    reps: Infinity,
    run: async () => record(key, await floors[key](corpus)),
  });

  if (kind === 'real') {
    return [
      repomix('plain', true),
      apiScan(true),
      repomix('json', true),
      engine(true),
      {
        // The rows above detect secrets (the default, redact); this one does not: the difference is detection's cost.
        label: 'engine cold, secrets off',
        reps: Infinity,
        run: async () => record('engine-cold-secrets-off', (await engineRuns(corpus, false, { secrets: 'off' })).cold),
      },
      {
        // Warm: the same scan again with the token cache the cold one filled, as a repeat scan in parts.
        label: 'engine cold + warm, in parts of 100 000 tokens',
        reps: Infinity,
        run: async () => {
          const r = await engineRuns(corpus, true, { maxTokensPerPart: 100_000 });
          return [record('engine-cold-parts', r.cold), ...(r.warm ? [record('engine-warm-parts', r.warm)] : [])].join(
            '; ',
          );
        },
      },
      {
        // Compressed code against the plain cold row above (`engine-cold`): the cost of parsing, and the tokens it saves.
        label: 'engine cold, compress=signatures',
        reps: Infinity,
        run: async () =>
          record('engine-cold-compress', (await engineRuns(corpus, false, { compress: 'signatures' })).cold),
      },
      {
        label: 'API full scan of the git URL, cold',
        reps: Infinity,
        run: async () => record('api-clone-cold', (await apiScanRuns([ctx.gitUrl]))[0] as Sample),
      },
      { label: 'API inspect', reps: Infinity, run: async () => record('api-inspect', await inspectRun(corpus.root)) },
      {
        label: 'API inspect of the git URL',
        reps: Infinity,
        run: async () => record('api-inspect-clone', await inspectRun(ctx.gitUrl)),
      },
      floor('token-floor'),
      floor('scan-floor'),
      floor('read-floor'),
      {
        label: 'repomix plain with its security check, cold',
        reps: 1,
        run: async () =>
          record('repomix-plain-secretlint-cold', await repomixRun(deps, corpus, 'plain', repomixHome, true, true)),
      },
      {
        label: 'repomix plain --compress, cold',
        reps: 1,
        run: async () =>
          record(
            'repomix-plain-compress-cold',
            await repomixRun(deps, corpus, 'plain', repomixHome, true, false, true),
          ),
      },
    ];
  }
  if (kind === 'real2x') return [apiScan(false), engine(false), floor('read-floor')];
  return [apiScan(false), engine(false), floor('read-floor'), repomix('plain', false, 1)];
}

/** Section `rescan`: a cold scan of the git URL, its repeat (commit cache), a one-file commit, the rescan and the change digest, then a digest of a commit that changes every file, on one API and worker. */
function cloneRescanUnit(corpora: Corpora, recorder: Recorder): Unit {
  return {
    label: 'API git URL: cold scan, repeat, one-file commit, rescan, change digests',
    reps: Infinity,
    run: async () => {
      const r = await cloneRescanRun(corpora);
      const rows = [
        ['api-clone-commit-cold', r.cold],
        ...r.cached.map((sample) => ['api-clone-commit-cached', sample] as const),
        ['api-clone-one-file-commit', r.rescan],
        ...r.later.map((sample) => ['api-clone-later-commits', sample] as const),
        ['api-clone-change-digest', r.digest],
        ['api-clone-change-digest-every-file', r.digestEveryFile],
      ] as const;
      for (const [key, sample] of rows) recorder.add(corpora.real, key, sample);
      return rows.map(([key, sample]) => `${key} ${describe(sample)}`).join('; ');
    },
  };
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const startedAt = new Date();
  const loadBefore = loadavg();

  await preflight({ load: args.sections.has('load'), micro: args.sections.has('micro') });
  // The streams and fleet sections need no corpus, repomix or git server: run alone, they start at once.
  const needsCorpora = [...args.sections].some((s) => s !== 'streams' && s !== 'fleet');
  const deps = needsCorpora ? await ensureBenchDeps(log) : null;
  if (args.build) {
    log('npm run build');
    await run('npm', ['run', '-s', 'build'], { cwd: REPO_ROOT, maxBuffer: 1 << 24 });
  }
  let corpora: Corpora | null = null;
  if (needsCorpora) {
    log(
      args.quick
        ? 'preparing the --quick corpora'
        : 'preparing the corpora (first run: downloads about 25 MB of npm tarballs)',
    );
    corpora = await prepareCorpora(args.quick, log);
    await writeWarmupTree();
  }

  const recorder = new Recorder();
  const repomixHome = await mkdtemp(join(tmpdir(), 'reposcan-bench-repomix-'));
  const git = corpora ? await startGitHttpServer(corpora.gitProjectRoot) : null;

  const blocks: Array<{ corpus: Corpus; units: Unit[] }> = [];
  if (corpora && deps && git) {
    const ctx = { deps, recorder, repomixHome, gitUrl: `${git.origin}/${corpora.gitRepoName}` };
    if (args.sections.has('real')) blocks.push({ corpus: corpora.real, units: unitsFor(corpora.real, 'real', ctx) });
    if (args.sections.has('real2x'))
      blocks.push({ corpus: corpora.real2x, units: unitsFor(corpora.real2x, 'real2x', ctx) });
    if (args.sections.has('synthetic'))
      blocks.push({ corpus: corpora.synthetic, units: unitsFor(corpora.synthetic, 'synthetic', ctx) });
    if (args.sections.has('rescan')) {
      // On `real`: with that section, in its rotation; alone, as a block of its own.
      const { real } = corpora;
      const unit = cloneRescanUnit(corpora, recorder);
      const block = blocks.find((b) => b.corpus === real);
      if (block) block.units.push(unit);
      else blocks.push({ corpus: real, units: [unit] });
    }
  }
  const extra =
    (args.sections.has('load') ? 3 : 0) +
    (args.sections.has('streams') ? STREAM_RUNS.length : 0) +
    (args.sections.has('micro') ? 1 : 0) +
    (args.sections.has('cli') ? 1 : 0) +
    (args.sections.has('throughput') ? throughputReps(args) * (SETUPS.length + 1) : 0) +
    (args.sections.has('fleet') ? 3 : 0);
  const progress = new Progress(
    blocks.reduce((sum, b) => sum + b.units.reduce((n, u) => n + Math.min(u.reps, args.reps), 0), 0) + extra,
  );

  let load: LoadResults | null = null;
  let micro: MicroResult[] | null = null;
  let streams: IdleStreams[] | null = null;
  let cli: CliStartup | null = null;
  let queueThroughput: Throughput | null = null;
  let fleetCost: Fleet | null = null;
  try {
    for (const block of blocks) {
      // Tools alternate within each repetition; the starting tool rotates, so slow drift in the
      // machine's load spreads over every tool instead of landing on one.
      for (let rep = 0; rep < args.reps; rep++) {
        const units = block.units.filter((u) => u.reps > rep);
        const shift = rep % units.length;
        for (const unit of [...units.slice(shift), ...units.slice(0, shift)]) {
          progress.begin(`${block.corpus.id}: ${unit.label} (repetition ${rep + 1}/${args.reps})`);
          progress.end(await unit.run());
        }
      }
    }

    if (args.sections.has('load') && corpora) {
      const seconds = args.quick ? 5 : 30;
      load = { summary: [], health: null };
      // A small real package (the main figure) and a 1 000-file one: the summary lists every file.
      for (const folder of ['react-dom-19.2.0', 'lodash-4.17.21']) {
        progress.begin(`wrk ${seconds} s: GET /v1/summary of a scan of ${folder}`);
        const s = await summaryLoad(corpora.real, folder, seconds);
        load.summary.push(s);
        progress.end(`${s.wrk.requests_per_sec.toFixed(0)} req/s, p99 ${s.wrk.latency_ms.p99.toFixed(1)} ms`);
      }
      progress.begin(`wrk ${seconds} s: GET /health while two workers scan ${corpora.real.id}`);
      load.health = await healthUnderScans(corpora.real, seconds);
      progress.end(
        `${load.health.wrk.requests_per_sec.toFixed(0)} req/s, p99 ${load.health.wrk.latency_ms.p99.toFixed(1)} ms`,
      );
    }

    if (args.sections.has('streams')) {
      const seconds = args.quick ? 5 : 10;
      streams = [];
      for (const { streams: count, scans } of STREAM_RUNS) {
        progress.begin(
          `${count} idle event streams on ${scans === 1 ? 'one queued scan' : `${scans} queued scans`}: API CPU over ${seconds} s`,
        );
        const s = await idleStreams(count, scans, seconds);
        streams.push(s);
        progress.end(
          `${s.cpu_percent.toFixed(1)} % of a core (${s.baseline_cpu_percent.toFixed(1)} % with none open), ${s.cpu_percent_per_1000.toFixed(2)} % per 1 000 streams, +${s.rss_added_mb.toFixed(0)} MB`,
        );
      }
    }

    if (args.sections.has('cli') && corpora) {
      const runs = args.quick ? 5 : 15;
      // lodash: 1 054 files, in the quick and the full corpus alike.
      const tree = { ...corpora.real, id: 'lodash-4.17.21', root: join(corpora.real.root, 'lodash-4.17.21') };
      progress.begin(`CLI start-up: help, one-file and repeat --local scans, ${runs} runs each`);
      cli = await cliStartup({ runs, tree, deps });
      progress.end(cli.rows.map((r) => `${r.key} ${Math.round(r.wall_ms?.median ?? 0)} ms`).join(', '));
    }

    if (args.sections.has('throughput') && corpora) {
      queueThroughput = await throughput(corpora.real, throughputReps(args), progress);
    }

    if (args.sections.has('fleet')) fleetCost = await fleet(args.quick ? 2_000 : 10_000, args.quick ? 5 : 10, progress);

    if (args.sections.has('micro') && corpora) {
      progress.begin('micro-benchmarks: estimator, pathological inputs');
      const scratch = await mkdtemp(join(tmpdir(), 'reposcan-bench-micro-'));
      try {
        const { stdout } = await run(
          process.execPath,
          ['--import', 'tsx', join(BENCH_DIR, 'children', 'micro.ts'), corpora.real.root, scratch],
          {
            cwd: REPO_ROOT,
            maxBuffer: 1 << 24,
          },
        );
        micro = JSON.parse(stdout.trim().split('\n').pop() as string) as MicroResult[];
      } finally {
        await rm(scratch, { recursive: true, force: true });
      }
      progress.end(`${micro.length} measurements`);
    }
  } finally {
    await git?.close();
    await rm(repomixHome, { recursive: true, force: true });
  }

  const corpusList = blocks.map((b) => b.corpus);
  const rows = buildRows(recorder, corpusList);
  const targets = [
    ...buildTargets(
      rows,
      { real: corpora?.real.id ?? '', real2x: corpora?.real2x.id ?? '', synthetic: corpora?.synthetic.id ?? '' },
      load,
      micro,
      streams,
    ),
    ...(cli ? cliTargets(cli) : []),
    ...(queueThroughput ? throughputTargets(queueThroughput) : []),
  ];
  const checks = consistencyChecks(rows);
  const loadAfter = loadavg();
  const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8' }).trim();
  const dirty =
    execFileSync('git', ['status', '--porcelain', '--', 'packages', 'apps'], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
    }).trim() !== '';
  const cpu = cpus();
  const environment = [
    `${startedAt.toISOString()}, reposcan ${commit}${dirty ? ' (with uncommitted changes in packages/ or apps/)' : ''}, ${args.quick ? '**--quick** (small corpora, indicative only)' : 'full run'}, ${args.reps} repetition(s)`,
    `${cpu.length} × ${cpu[0]?.model.trim() ?? 'unknown CPU'}, Node ${process.version} (reposcan)${deps ? `, Node ${deps.node22Version} (repomix ${deps.repomixVersion}, \`--no-security-check\` unless stated)` : ''}`,
    `load average ${loadBefore.map((l) => l.toFixed(1)).join(' ')} at the start, ${loadAfter.map((l) => l.toFixed(1)).join(' ')} at the end; ${noiseSummary(rows)}`,
  ];
  const warmCold = (corpus: string, base: string) => {
    const cold = rows.find((r) => r.corpus === corpus && r.key === `${base}-cold`);
    const warm = rows.find((r) => r.corpus === corpus && r.key === `${base}-warm`);
    return cold && warm ? warm.wall_s.median / cold.wall_s.median : null;
  };
  const notes = [
    'Wall time: a waiting `POST /v1/scan` to its 201 with the result for API rows (a long-lived worker, its tokenizer threads already loaded); process start to exit for the engine and repomix; the work alone for the floors. MB/s = corpus bytes ÷ median. Peak RSS: the highest of the runs (worker VmHWM for API scans, API process for inspect, GNU time otherwise).',
    'Cold: token cache empty (repomix: `$TMPDIR/repomix/cache` deleted). Warm: the same run again right after, same cache location. Ratios compare cold with cold and warm with warm.',
  ];
  const engineWarm = corpora ? warmCold(corpora.real.id, 'engine') : null;
  const apiWarm = corpora ? warmCold(corpora.real.id, 'api-scan') : null;
  if (corpora && (engineWarm !== null || apiWarm !== null)) {
    const show = (v: number | null) => (v === null ? 'not measured' : v.toFixed(2));
    notes.push(
      `reposcan warm ÷ cold on ${corpora.real.id}: engine ${show(engineWarm)}, API ${show(apiWarm)}. Near 1 means no token cache took effect and warm is a plain repeat run.`,
    );
  }

  const title = `reposcan benchmark${args.quick ? ' (--quick)' : ''}`;
  const markdown = renderMarkdown({
    title,
    environment,
    corpora: corpusList,
    rows,
    targets,
    load,
    streams,
    micro,
    checks,
    notes,
    extraTables: [
      ...(cli ? renderCliStartup(cli) : []),
      ...(queueThroughput ? renderThroughput(queueThroughput) : []),
      ...(fleetCost ? renderFleet(fleetCost) : []),
    ],
  });
  process.stdout.write(`\n${markdown}`);

  const resultsDir = join(BENCH_DIR, 'results');
  await mkdir(resultsDir, { recursive: true });
  const json = {
    started_at: startedAt.toISOString(),
    finished_at: new Date().toISOString(),
    args: { quick: args.quick, reps: args.reps, sections: [...args.sections] },
    environment: {
      commit,
      dirty,
      cpus: cpu.length,
      cpu_model: cpu[0]?.model.trim(),
      node: process.version,
      repomix: deps?.repomixVersion ?? null,
      repomix_node: deps?.node22Version ?? null,
      load_before: loadBefore,
      load_after: loadAfter,
    },
    corpora: corpusList,
    packages: corpora?.packages ?? null,
    rows,
    targets,
    load,
    streams,
    micro,
    cli,
    throughput: queueThroughput,
    fleet: fleetCost,
    checks,
    notes,
  };
  // Only a full run of every section replaces latest.*; quick and partial runs have files of their
  // own (gitignored). Earlier results are in git history, each with its start time inside.
  const name = args.quick ? 'quick-latest' : args.sections.size < SECTIONS.length ? 'partial-latest' : 'latest';
  const jsonName = `${name}.json`;
  const mdName = `${name}.md`;
  await writeFile(join(resultsDir, jsonName), `${JSON.stringify(json, null, 2)}\n`);
  await writeFile(join(resultsDir, mdName), markdown);
  log(`\nwrote bench/results/${jsonName} and bench/results/${mdName}`);
  if (checks.length > 0) process.exitCode = 1;
}

main().catch((error: unknown) => {
  process.stderr.write(`\n${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
