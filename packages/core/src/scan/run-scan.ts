import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { toWireOptions } from '@reposcan/contracts/vocabulary';
import type { WireScanOptions } from '@reposcan/contracts/vocabulary';
import { ARTIFACT_FILE_NAMES } from '../artifacts/artifact-names.js';
import type { WrittenArtifact } from '../artifacts/artifact-names.js';
import { TextArtifactWriter } from '../artifacts/write-text-artifacts.js';
import type { OutputLayout } from '../artifacts/write-text-artifacts.js';
import { writeZipBundle } from '../artifacts/write-zip-bundle.js';
import { ContentSpool } from '../artifacts/content-spool.js';
import { PART_FILE_PREFIX, writeParts } from '../artifacts/write-parts.js';
import type { PartedOutput } from '../artifacts/write-parts.js';
import { countingMarks } from '../artifacts/part-tally.js';
import type { RangeMarks } from '../artifacts/part-tally.js';
import { createTokenCounter } from '../tokens/token-counter.js';
import { jsonRenderer } from '../render/render-json.js';
import { markdownRenderer } from '../render/render-markdown.js';
import { txtRenderer } from '../render/render-txt.js';
import type {
  FormatRenderer,
  HeadContext,
  RenderContext,
  RepositoryBlock,
  TextFormat,
} from '../render/render-context.js';
import { renderTree } from '../render/render-tree.js';
import { IoThreads } from '../io/io-threads.js';
import { createTokenPool, withTokenCache } from '../tokens/index.js';
import type { CountTokens, TokenCache, TokenCacheStats } from '../tokens/index.js';
import { scanChanges } from './change-digest.js';
import { CarryRefusedError, carryForward } from './carry-forward.js';
import type { EarlierScan } from './carry-forward.js';
import type { ChangeDigestReport } from './change-digest.js';
import { collectFiles } from './collect-files.js';
import type { Collected } from './collect-files.js';
import type { InspectInput } from './inspect-tree.js';
import { renderBundleReadme } from './render-bundle-readme.js';
import { smallTreeScanDeps } from './scan-deps.js';
import type { ScanDeps } from './scan-deps.js';
import { summarize } from './summarize.js';
import type {
  AssetRecord,
  ChangeSet,
  ProgressCallback,
  SkippedPath,
  ScanSummaryTotals,
  ScannedFileRecord,
  TokenEncodingName,
} from '../types.js';
import type { SecretsSummary } from '../secrets/secret-scan.js';
import type { CompressionSummary } from '../compress/code-transform.js';

/** A scan's input: a preview's, and where and how its artifacts are written. */
export interface ScanInput extends InspectInput {
  encoding: TokenEncodingName;
  /** Existing, empty folder the artifacts are written into. */
  outDir: string;
  /** Extra top-level fields for the bundle's summary.json (scan_id, created_at …). */
  summaryExtras?: Record<string, unknown>;
  /** With `base_ref`: git's changes since the base commit; the outputs are then a change digest (change-digest.ts). */
  changes?: ChangeSet;
  /** An earlier scan of this tree but for some files' contents: its outputs are carried forward when they can be (carry-forward.ts). */
  earlier?: EarlierScan;
  /** Report where each output's blocks lie (ScanReport.layout), for a later scan to carry them forward. */
  keepLayout?: boolean;
}

export interface ScanTimings {
  walk_ms: number;
  read_ms: number;
  render_ms: number;
  zip_ms: number;
  total_ms: number;
}

/** What a finished scan knows: the core of the summary record (`GET /v1/summary`). */
export interface ScanReport {
  repository: RepositoryBlock;
  options: WireScanOptions;
  encoding: TokenEncodingName;
  summary: ScanSummaryTotals;
  tree: string | null;
  files: ScannedFileRecord[];
  assets: AssetRecord[];
  skipped: SkippedPath[];
  artifacts: WrittenArtifact[];
  /** With max_tokens_per_part: the parts of txt, md and json (which then have no single artifact). */
  parts?: PartedOutput[];
  timings: ScanTimings;
  /** What secret detection found; absent with `secrets: off`. */
  secrets?: SecretsSummary;
  /** What compressed code did; absent with neither `compress` nor `remove_comments`. */
  compression?: CompressionSummary;
  /** A change digest's commits, counts and changed paths; absent in a full scan. */
  changes?: ChangeDigestReport;
  /** With `keepLayout`, when the outputs are whole (no parts, no change digest): where their blocks lie. */
  layout?: Record<TextFormat, OutputLayout>;
  /** The number of files whose blocks were copied from an earlier scan's outputs (ScanInput.earlier). */
  carried?: number;
}

export interface RunScanDeps extends ScanDeps {
  /**
   * Exact token counts for a batch of UTF-8 contents. An engine passes its warm pool here; without
   * it runScan starts a pool of its own and closes it afterwards.
   */
  countTokens?: CountTokens;
  /** Counts known by content: only files it does not know are counted; `stats` adds up hits and misses. */
  tokenCache?: { cache: TokenCache; stats?: TokenCacheStats };
}

/** What a scan's report takes of what it collected (collectFiles, or a carried scan's equivalent). */
export type ReportedCollection = Pick<
  Collected,
  'assets' | 'skipped' | 'walkMs' | 'readMs' | 'secrets' | 'compression'
>;

/** What a scan's report takes of the outputs it wrote. */
export type WrittenOutputs = Pick<ScanReport, 'summary' | 'tree' | 'files' | 'artifacts' | 'parts'> & {
  renderMs: number;
};

/** The whole outputs, in the order they are written. */
const RENDERERS: FormatRenderer[] = [txtRenderer, markdownRenderer, jsonRenderer];

function repositoryBlock(input: ScanInput): RepositoryBlock {
  const { source } = input;
  return {
    name: input.repoName,
    source: source.type,
    url: source.url,
    branch: source.branch,
    commit: source.commit,
    subdir: source.subdir,
  };
}

/**
 * Scan `root` and write `output.txt|md|json` (and `output.zip` with `create_zip`) into
 * `outDir`. Contents stream from disk to the artifacts: only a few batches of files are in
 * memory at any time. On failure every file this call created in `outDir` is removed.
 *
 * On its own, a scan starts the threads it needs and ends them when it is over (a small tree is
 * walked and read on the calling thread: smallTreeScanDeps); a long-lived process scans through
 * an engine (createEngine), whose threads outlive one scan.
 */
export async function runScan(
  input: ScanInput,
  overrides: Partial<RunScanDeps> = {},
  onProgress: ProgressCallback = () => {},
): Promise<ScanReport> {
  const started = performance.now();
  const io = new IoThreads();
  const ownPool = overrides.countTokens ? null : createTokenPool({ encoding: input.encoding });
  try {
    void ownPool?.warm().catch(() => {});
    const countTokens: CountTokens =
      overrides.countTokens ?? ((contents, signal) => (ownPool as NonNullable<typeof ownPool>).count(contents, signal));
    return await scanTree(input, { ...smallTreeScanDeps(io), ...overrides, countTokens }, onProgress, started);
  } finally {
    await ownPool?.close();
    await io.close();
  }
}

/** runScan over the given threads and counter (an engine's); `started` is when the caller began it (timings.total_ms). */
export async function scanTree(
  input: ScanInput,
  deps: RunScanDeps & { countTokens: CountTokens },
  onProgress: ProgressCallback,
  started = performance.now(),
): Promise<ScanReport> {
  const cached = (count: CountTokens): CountTokens =>
    deps.tokenCache ? withTokenCache(count, deps.tokenCache.cache, deps.tokenCache.stats) : count;
  const countTokens = cached(deps.countTokens);
  if (input.changes !== undefined) {
    const report = await scanChanges(
      { ...input, changes: input.changes },
      deps,
      countTokens,
      onProgress,
      repositoryBlock(input),
      (partial, collected, files) => addZipBundle(input, deps, partial, collected, onProgress, files),
    );
    report.timings.total_ms = round(performance.now() - started);
    return report;
  }
  if (input.options.maxTokensPerPart !== null) return scanInParts(input, deps, cached, onProgress, started);
  if (input.earlier !== undefined) {
    const carried = await carryForward({
      input: { ...input, earlier: input.earlier },
      deps,
      countTokens,
      renderers: RENDERERS,
      repository: repositoryBlock(input),
      onProgress,
    });
    if (carried !== null) {
      const report = reportOf(input, repositoryBlock(input), carried.collected, carried.written);
      if (input.keepLayout) report.layout = carried.layout;
      report.carried = carried.written.files.length - input.earlier.changed.size;
      report.timings.total_ms = round(performance.now() - started);
      return report;
    }
    if (input.earlier.fallback === 'refuse') throw new CarryRefusedError('the earlier outputs could not be carried');
  }
  const writer = await TextArtifactWriter.open(input.outDir, RENDERERS, input.options.lite, deps.hashFile);
  try {
    const repository = repositoryBlock(input);
    const headFor = (walkedPaths: string[]): HeadContext => ({
      repository,
      encoding: input.encoding,
      tree: input.options.skipTree ? null : renderTree(input.repoName, walkedPaths, input.options.treeDepth),
      lite: input.options.lite,
    });
    let head: HeadContext | undefined;
    // The heads are written as soon as the walk is over, while files are still being counted.
    const collected = await collectFiles(
      { ...input, exactTokens: true },
      deps,
      countTokens,
      (record, content) => writer.addFile(record, content),
      onProgress,
      async (walkedPaths) => {
        head = headFor(walkedPaths);
        await writer.begin(head);
      },
    );

    const { files, summary, renderStart } = renderPhase(collected, onProgress);
    // collectFiles has called onWalked by now; finish() would refuse an artifact without its head.
    head ??= headFor(collected.walkedPaths);
    const ctx: RenderContext = { ...head, summary, assets: collected.assets, skippedCount: collected.skipped.length };
    const artifacts = await writer.finish(ctx);
    const renderMs = performance.now() - renderStart;

    const report = reportOf(input, repository, collected, { summary, tree: ctx.tree, files, artifacts, renderMs });
    if (input.keepLayout) report.layout = writer.layouts();

    if (input.options.createZip)
      await addZipBundle(
        input,
        deps,
        report,
        collected,
        onProgress,
        artifacts.map((a) => a.file),
      );
    report.timings.total_ms = round(performance.now() - started);
    return report;
  } catch (error) {
    await writer.abort();
    await Promise.allSettled(
      Object.values(ARTIFACT_FILE_NAMES).map((name) => rm(join(input.outDir, name), { force: true })),
    );
    throw error;
  }
}

/** Collection is over: the render phase starts, and the exactly counted files are summed up. */
function renderPhase(
  collected: Collected,
  onProgress: ProgressCallback,
): { files: ScannedFileRecord[]; summary: ScanSummaryTotals; renderStart: number } {
  const total = collected.files.length + collected.assets.length;
  onProgress({ phase: 'render', files_done: total, files_total: total });
  const renderStart = performance.now();
  // Collected with exact counts, every record has `tokens`.
  const files = collected.files as ScannedFileRecord[];
  return { files, summary: summarize(files, collected.assets, true), renderStart };
}

/** The parts of a scan being written, and the heads they started from. */
interface PartsInProgress {
  head: HeadContext;
  parts: Promise<PartedOutput[]>;
}

/**
 * A scan whose outputs are cut into parts of at most `max_tokens_per_part` tokens: contents go to a
 * spool as files are counted, and from the walk's end each format's parts are planned and written
 * with exact counts from it (write-parts.ts) while the scan goes on. The ZIP bundle holds every part.
 */
async function scanInParts(
  input: ScanInput,
  deps: RunScanDeps & { countTokens: CountTokens },
  cached: (count: CountTokens) => CountTokens,
  onProgress: ProgressCallback,
  started: number,
): Promise<ScanReport> {
  const budget = input.options.maxTokensPerPart as number;
  const spool = await ContentSpool.open(input.outDir);
  // Stretches and JSON-escaped contents go through the token cache too, so a repeat scan in parts
  // counts nothing again; its hits and misses stay those of whole files.
  const { tokenCache } = deps;
  const stretches = tokenCache ? withTokenCache(deps.countTokens, tokenCache.cache) : deps.countTokens;
  // A file that may need cutting is counted in stretches, whose marks the cut reuses.
  const rawMarks = new WeakMap<Uint8Array, RangeMarks>();
  const countTokens = cached(countingMarks(deps.countTokens, stretches, budget, rawMarks));
  const repository = repositoryBlock(input);
  const counter = createTokenCounter(input.encoding);
  let settle!: { resolve: (ctx: RenderContext) => void; reject: (error: unknown) => void };
  const whole = new Promise<RenderContext>((resolve, reject) => (settle = { resolve, reject }));
  whole.catch(() => undefined);
  // The parts are written while files are still counted, from the walk's end (the heads need the
  // tree); held in an object, as the walk's callback is what starts them.
  const writing: { now: PartsInProgress | null } = { now: null };
  const startWriting = (walkedPaths: string[]): PartsInProgress => {
    const head: HeadContext = {
      repository,
      encoding: input.encoding,
      tree: input.options.skipTree ? null : renderTree(input.repoName, walkedPaths, input.options.treeDepth),
      lite: input.options.lite,
    };
    const parts = writeParts({
      outDir: input.outDir,
      repoName: input.repoName,
      budget,
      head,
      whole,
      spool,
      count: (bytes) => counter.countUtf8(bytes),
      countBatch: stretches,
      signal: input.signal,
    });
    // Awaited below; a failure meanwhile must not count as unhandled.
    parts.catch(() => undefined);
    writing.now = { head, parts };
    return writing.now;
  };
  try {
    const collected = await collectFiles(
      { ...input, exactTokens: true },
      deps,
      countTokens,
      (record, content) => spool.add(record as ScannedFileRecord, content, rawMarks.get(content)),
      onProgress,
      (walkedPaths) => {
        startWriting(walkedPaths);
        return Promise.resolve();
      },
    );
    await spool.end();
    const { files, summary, renderStart } = renderPhase(collected, onProgress);
    const { head, parts } = writing.now ?? startWriting(collected.walkedPaths);
    const ctx: RenderContext = {
      ...head,
      summary,
      assets: collected.assets,
      skippedCount: collected.skipped.length,
    };
    settle.resolve(ctx);
    const parted = await parts;
    const renderMs = performance.now() - renderStart;
    await spool.close();
    const report = reportOf(input, repository, collected, {
      summary,
      tree: ctx.tree,
      files,
      artifacts: [],
      parts: parted,
      renderMs,
    });
    if (input.options.createZip)
      await addZipBundle(
        input,
        deps,
        report,
        collected,
        onProgress,
        parted.flatMap((output) => output.parts.map((p) => p.file)),
      );
    report.timings.total_ms = round(performance.now() - started);
    return report;
  } catch (error) {
    // The writers stop (the spool and the totals fail them) before what they wrote is removed.
    spool.abandon(error);
    settle.reject(error);
    await writing.now?.parts.catch(() => undefined);
    await spool.close();
    const written = (await readdir(input.outDir).catch(() => [])).filter((name) => name.startsWith(PART_FILE_PREFIX));
    await Promise.allSettled(
      [ARTIFACT_FILE_NAMES.zip, ...written].map((name) => rm(join(input.outDir, name), { force: true })),
    );
    throw error;
  }
}

/** The report of a scan whose outputs are written (the ZIP bundle and total_ms come after). */
function reportOf(
  input: ScanInput,
  repository: RepositoryBlock,
  collected: ReportedCollection,
  written: WrittenOutputs,
): ScanReport {
  return {
    repository,
    options: toWireOptions(input.options),
    encoding: input.encoding,
    summary: written.summary,
    tree: written.tree,
    files: written.files,
    assets: collected.assets,
    skipped: collected.skipped,
    artifacts: written.artifacts,
    ...(written.parts === undefined ? {} : { parts: written.parts }),
    timings: {
      walk_ms: round(collected.walkMs),
      read_ms: round(collected.readMs),
      render_ms: round(written.renderMs),
      zip_ms: 0,
      total_ms: 0,
    },
    ...(collected.secrets === null ? {} : { secrets: collected.secrets }),
    ...(collected.compression === null ? {} : { compression: collected.compression }),
  };
}

/** Writes the ZIP bundle of `files` (outputs in outDir), the tree's assets and the report, and lists it. */
async function addZipBundle(
  input: ScanInput,
  deps: RunScanDeps,
  report: ScanReport,
  collected: { assets: ScanReport['assets']; assetAbsPaths: string[] },
  onProgress: ProgressCallback,
  files: string[],
): Promise<void> {
  input.signal?.throwIfAborted();
  onProgress({ phase: 'zip', files_done: 0, files_total: files.length + collected.assets.length });
  const zipStart = performance.now();
  const zipped = await writeZipBundle({
    outPath: join(input.outDir, ARTIFACT_FILE_NAMES.zip),
    files: files.map((name) => ({ name, absPath: join(input.outDir, name) })),
    treeFiles: collected.assets.map((a, i) => ({ path: a.path, absPath: collected.assetAbsPaths[i] as string })),
    documents: [
      {
        name: 'summary.json',
        content: `${JSON.stringify({ ...input.summaryExtras, ...report, layout: undefined }, null, 2)}\n`,
      },
      { name: 'README.md', content: renderBundleReadme(report) },
    ],
    date: deps.now(),
  });
  report.timings.zip_ms = round(performance.now() - zipStart);
  report.artifacts.push({ format: 'zip', file: ARTIFACT_FILE_NAMES.zip, bytes: zipped.bytes, sha256: zipped.sha256 });
}

function round(ms: number): number {
  return Math.round(ms);
}
