import { Buffer } from 'node:buffer';
import { lstat, readdir, rm } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { ARTIFACT_FILE_NAMES } from '../artifacts/artifact-names.js';
import { EarlierArtifactError, TextArtifactWriter } from '../artifacts/write-text-artifacts.js';
import type { BlockSource, EarlierArtifact, OutputLayout } from '../artifacts/write-text-artifacts.js';
import { isSpliceFileOf, openOutput } from '../artifacts/spliced-artifact.js';
import type { OutputSource } from '../artifacts/spliced-artifact.js';
import { buildFileUrl, fileUrlBase } from '../render/file-url.js';
import type {
  FormatRenderer,
  HeadContext,
  RenderContext,
  RepositoryBlock,
  TextFormat,
} from '../render/render-context.js';
import type { CountTokens } from '../tokens/index.js';
import type { SecretsSummary } from '../secrets/secret-scan.js';
import type { CompressionSummary } from '../compress/code-transform.js';
import { IGNORE_FILE_NAMES } from '../walk/ignore-file-names.js';
import { collectFiles } from './collect-files.js';
import type { ScanDeps } from './scan-deps.js';
import { summarize } from './summarize.js';
import type {
  AssetRecord,
  ProgressCallback,
  ScannedFileRecord,
  SkippedPath,
  TextFileRecord,
  WalkedFile,
} from '../types.js';
import type { ReportedCollection, ScanInput, WrittenOutputs } from './run-scan.js';

/** What a later scan needs of a finished one, beside its outputs, to carry those forward. */
export interface CarriedScan {
  tree: string | null;
  files: ScannedFileRecord[];
  assets: AssetRecord[];
  skipped: SkippedPath[];
  secrets: SecretsSummary | null;
  /** Where each output's blocks lie. */
  layout: Record<TextFormat, OutputLayout>;
}

/**
 * An earlier scan of the same repository under the same options, whose tree differs from the one
 * being scanned only in the contents of `changed` (same paths, modes and links otherwise): the
 * caller vouches for that (a clone compares git's listings).
 */
export interface EarlierScan extends CarriedScan {
  changed: ReadonlySet<string>;
  /** Its outputs, by format: absolute paths (each a file, or spliced: spliced-artifact.ts). */
  outputs: Record<TextFormat, string>;
  /**
   * What runScan does when the outputs cannot be carried: scan as usual (the default), or throw
   * CarryRefusedError when the tree cannot be scanned as usual (its unchanged files were left
   * unread where the scan cannot read them).
   */
  fallback?: 'scan' | 'refuse';
}

/** The outputs could not be carried forward, and the scan was not to be made as usual (EarlierScan.fallback). */
export class CarryRefusedError extends Error {
  override readonly name = 'CarryRefusedError';
}

/** A scan given an earlier one, and what it writes with. */
export interface CarryingScan {
  input: ScanInput & { earlier: EarlierScan };
  deps: ScanDeps;
  countTokens: CountTokens;
  renderers: FormatRenderer[];
  repository: RepositoryBlock;
  onProgress: ProgressCallback;
}

/** Changed texts are held in memory until their blocks are written: a change larger than this is scanned as usual. */
const MAX_CHANGED_BYTES = 32 << 20;

/**
 * A carried output is spliced (refers to the earlier one's bytes) while the earlier one has fewer
 * pieces than this, else written whole: each commit's own piece would otherwise stay referred to
 * for as long as any of its bytes do, and reading an output would open ever more files.
 */
const MAX_SPLICE_PIECES = 16;

/** What a carried scan's report is made of (as a scan's: collected, then written), and its outputs' layout. */
interface Carried {
  collected: ReportedCollection;
  written: WrittenOutputs;
  layout: Record<TextFormat, OutputLayout>;
}

/**
 * A rescan that writes only what changed: the changed files are processed as a scan processes
 * them (the walk is not run: the caller vouches that only their contents changed), and every
 * other file's block is copied from the earlier outputs, which hold the same bytes a fresh render
 * would give (same record, same text) but for the file's link, which is spliced in when it
 * names the new commit. Resolves to null, having written nothing, when the outcome could differ
 * from a fresh scan's (a changed file is no longer a text, or over the size limit), the change
 * is too large to hold, or an earlier output cannot be read as its layout says: the caller then
 * scans as usual.
 */
export async function carryForward(scan: CarryingScan): Promise<Carried | null> {
  const { earlier, options } = scan.input;
  // A ZIP bundle copies the tree's non-textual files from disk, which a carried scan never lists.
  if (options.createZip || !mayCarry(earlier.files, earlier.changed)) return null;
  // Opened first: an earlier scan deleted meanwhile means a scan as usual, not a failure.
  const handles = new Map<TextFormat, OutputSource>();
  try {
    for (const { format } of scan.renderers) handles.set(format, await openOutput(earlier.outputs[format]));
  } catch {
    await closeAll(handles);
    return null;
  }
  try {
    return await writeCarried(scan, handles);
  } finally {
    await closeAll(handles);
  }
}

/**
 * Whether outputs listing `files` can be carried to a tree that differs only in the contents of
 * `changed`, as far as its paths tell: every changed file was a text, none is an ignore file (it
 * may change what the walk keeps anywhere), and their earlier sizes fit what a carry holds. The
 * new contents may still refuse it (carryForward).
 */
export function mayCarry(files: readonly ScannedFileRecord[], changed: ReadonlySet<string>): boolean {
  let bytes = 0;
  const sizes = new Map(files.map((f) => [f.path, f.size_bytes]));
  for (const path of changed) {
    const size = sizes.get(path);
    if (size === undefined || IGNORE_FILE_NAMES.includes(posix.basename(path))) return false;
    bytes += size;
  }
  return bytes <= MAX_CHANGED_BYTES;
}

async function writeCarried(
  { input, deps, countTokens, renderers, repository, onProgress }: CarryingScan,
  handles: ReadonlyMap<TextFormat, OutputSource>,
): Promise<Carried | null> {
  const { earlier, options } = input;
  const walked = await walkedChanges(input);
  if (walked === null) return null;
  // The walk would list what it listed before but for these files' sizes, which are checked here.
  const walk: ScanDeps['walk'] = (_walkInput, sink) => {
    if (walked.length > 0) sink(walked);
    return Promise.resolve([...earlier.skipped]);
  };
  const fresh = new Map<string, { record: ScannedFileRecord; content: Uint8Array }>();
  let held = 0;
  const collected = await collectFiles(
    { ...input, exactTokens: true },
    { ...deps, walk },
    countTokens,
    (record, content) => {
      held += content.byteLength;
      // Past the bound nothing more is held, and the scan is done as usual.
      if (held <= MAX_CHANGED_BYTES)
        fresh.set(record.path, { record: record as ScannedFileRecord, content: Buffer.from(content) });
      return Promise.resolve();
    },
    onProgress,
  );
  if (
    held > MAX_CHANGED_BYTES ||
    fresh.size !== earlier.changed.size ||
    collected.assets.length > 0 ||
    !isDeepStrictEqual(collected.skipped, earlier.skipped)
  )
    return null;

  const renderStart = performance.now();
  const blocks: BlockSource[] = [];
  const files: ScannedFileRecord[] = [];
  const relink = relinker(earlier.files[0] ?? earlier.assets[0], input.source);
  for (const [index, file] of earlier.files.entries()) {
    const changed = fresh.get(file.path);
    if (changed !== undefined) {
      blocks.push(changed);
      files.push(changed.record);
      continue;
    }
    const url = relink(file);
    // The block's link is spliced in: as JSON writes it, it must be the link itself.
    if (url !== file.url && !(plainLink(file.url) && plainLink(url))) return null;
    blocks.push({ index, from: file.url, to: url });
    files.push(url === file.url ? file : { ...file, url });
  }
  const assets = earlier.assets.map((asset) => ({ ...asset, url: relink(asset) }));
  const summary = summarize(files, assets, true);
  const head: HeadContext = { repository, encoding: input.encoding, tree: earlier.tree, lite: options.lite };
  const spliced = [...handles.values()].every((h) => (h.splice?.pieces.length ?? 1) < MAX_SPLICE_PIECES);
  const writer = await TextArtifactWriter.open(
    input.outDir,
    renderers,
    options.lite,
    deps.hashFile,
    spliced ? deps.hashOutput : undefined,
  );
  try {
    const total = files.length + assets.length;
    onProgress({ phase: 'render', files_done: total, files_total: total });
    await writer.begin(head);
    const from = Object.fromEntries(
      renderers.map(({ format }) => [
        format,
        { output: handles.get(format) as OutputSource, layout: earlier.layout[format] },
      ]),
    ) as Record<TextFormat, EarlierArtifact>;
    await writer.addBlocks(blocks, from);
    const ctx: RenderContext = { ...head, summary, assets, skippedCount: earlier.skipped.length };
    const artifacts = await writer.finish(ctx);
    return {
      collected: {
        assets,
        skipped: earlier.skipped,
        walkMs: collected.walkMs,
        readMs: collected.readMs,
        secrets:
          earlier.secrets === null ? null : mergeSecrets(earlier.secrets, collected.secrets, files, earlier.changed),
        compression: collected.compression === null ? null : compressionOf(collected.compression, files),
      },
      written: { summary, tree: earlier.tree, files, artifacts, renderMs: performance.now() - renderStart },
      layout: writer.layouts(),
    };
  } catch (error) {
    await writer.abort();
    const written = (await readdir(input.outDir).catch(() => [] as string[])).filter((name) =>
      renderers.some(({ format }) => {
        const file = ARTIFACT_FILE_NAMES[format];
        return name === file || isSpliceFileOf(name, file);
      }),
    );
    await Promise.allSettled(written.map((name) => rm(join(input.outDir, name), { force: true })));
    // A damaged earlier output costs this scan its shortcut, not its outcome.
    if (error instanceof EarlierArtifactError) return null;
    throw error;
  }
}

async function closeAll(handles: ReadonlyMap<TextFormat, OutputSource>): Promise<void> {
  await Promise.allSettled([...handles.values()].map((h) => h.close()));
}

/**
 * The changed files as the walk would hand them on, or null when it would not keep one: the tree's
 * paths, links and ignore files are the earlier scan's, so what the walk keeps of it is too, but
 * for the size limit. A file on disk is measured there, else its size comes from `absent`.
 */
async function walkedChanges(input: ScanInput & { earlier: EarlierScan }): Promise<WalkedFile[] | null> {
  const maxFileBytes = Math.min(input.options.sizeLimit ?? Infinity, input.limits.maxFileBytes);
  const walked: WalkedFile[] = [];
  for (const path of input.earlier.changed) {
    const absPath = join(input.root, path);
    const size = await lstat(absPath).then(
      (stats) => (stats.isFile() ? stats.size : null),
      () => input.absent?.get(path) ?? null,
    );
    if (size === null || size > maxFileBytes) return null;
    walked.push({ path, absPath, size });
  }
  return walked;
}

type Linked = { path: string; url: string };

/**
 * The new link of an earlier file: each link is the source's base followed by the file's path, so
 * one earlier file's link (`sample`) tells the earlier base, which is swapped for the new one
 * rather than every path encoded again.
 */
function relinker(sample: Linked | undefined, source: ScanInput['source']): (file: Linked) => string {
  const build = (file: Linked): string => buildFileUrl(source, file.path);
  const base = fileUrlBase(source);
  if (sample === undefined || base === '') return build;
  const pathPart = build(sample).slice(base.length);
  const earlierBase = sample.url.endsWith(pathPart) ? sample.url.slice(0, sample.url.length - pathPart.length) : '';
  if (earlierBase === '') return build;
  return (file) => (file.url.startsWith(earlierBase) ? base + file.url.slice(earlierBase.length) : build(file));
}

/** A link JSON writes as it is (no quote, backslash, control character or surrogate), as the other formats do. */
function plainLink(url: string): boolean {
  for (let i = 0; i < url.length; i++) {
    const unit = url.charCodeAt(i);
    if (unit < 0x20 || unit === 0x22 || unit === 0x5c || (unit >= 0xd800 && unit <= 0xdfff)) return false;
  }
  return true;
}

/** The earlier findings of unchanged files and the new ones of changed files, in file order as a scan lists them. */
function mergeSecrets(
  earlier: SecretsSummary,
  fresh: SecretsSummary | null,
  files: readonly TextFileRecord[],
  changed: ReadonlySet<string>,
): SecretsSummary {
  const before = secretsByPath(earlier);
  const now = secretsByPath(fresh);
  const merged: SecretsSummary = { mode: earlier.mode, count: 0, findings: [], not_checked: [] };
  for (const { path } of files) {
    const from = changed.has(path) ? now : before;
    if (from.notChecked.has(path)) merged.not_checked.push(path);
    for (const finding of from.found.get(path) ?? []) merged.findings.push(finding);
  }
  merged.count = merged.findings.length;
  return merged;
}

function secretsByPath(summary: SecretsSummary | null): {
  found: Map<string, SecretsSummary['findings']>;
  notChecked: Set<string>;
} {
  const found = new Map<string, SecretsSummary['findings']>();
  for (const finding of summary?.findings ?? []) {
    const list = found.get(finding.path);
    if (list) list.push(finding);
    else found.set(finding.path, [finding]);
  }
  return { found, notChecked: new Set(summary?.not_checked ?? []) };
}

/** What compressed code did over `files`, from their records, as a scan adds it up file by file. */
function compressionOf(options: CompressionSummary, files: readonly ScannedFileRecord[]): CompressionSummary {
  const summary: CompressionSummary = {
    compress: options.compress,
    remove_comments: options.remove_comments,
    files: 0,
    tokens_before: 0,
    tokens_after: 0,
    not_compressed: [],
  };
  for (const file of files) {
    const outcome = file.compression;
    if (outcome === undefined) continue;
    if (outcome.result === 'compressed') {
      summary.files++;
      summary.tokens_before += outcome.tokens_before;
      summary.tokens_after += file.tokens;
    } else summary.not_compressed.push({ path: file.path, reason: outcome.result });
  }
  return summary;
}
