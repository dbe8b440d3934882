// A change digest (`base_ref`): the scan's walk, reads, secret checks and counts over the changed
// files only, and outputs that show each one's diff and new text. git computed the change list and
// the diffs (the sources package hands them in as a file and ranges of it); this file only
// filters, checks, counts and renders them. A change can be as large as the repository, so no
// more than a batch of diffs and texts is in memory at once: the new texts wait in a spool, the
// diffs in git's file.
import { isUtf8 } from 'node:buffer';
import { createHash } from 'node:crypto';
import { open, rm } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { ScanError } from '@reposcan/contracts/error-codes';
import { toWireOptions } from '@reposcan/contracts/vocabulary';
import { ARTIFACT_FILE_NAMES } from '../artifacts/artifact-names.js';
import type { WrittenArtifact } from '../artifacts/artifact-names.js';
import { ChunkBuffer } from '../artifacts/chunk-buffer.js';
import { ContentSpool } from '../artifacts/content-spool.js';
import type { SpooledFile } from '../artifacts/content-spool.js';
import { classifyByName, isDocsPath } from '../classify/index.js';
import { buildFileUrl } from '../render/file-url.js';
import { renderChangeDigest } from '../render/render-changes.js';
import type { ChangeDigestBlock, DigestContext, DigestEntry, DigestTexts } from '../render/render-changes.js';
import type { RepositoryBlock } from '../render/render-context.js';
import { renderTree } from '../render/render-tree.js';
import { carriedPath } from '../path-bytes.js';
import { SECRETS_MAX_BYTES } from '../secrets/secret-scan.js';
import type { SecretsSummary } from '../secrets/secret-scan.js';
import { asBuffer, utf8Encode } from '../text/utf8.js';
import type { CountTokens } from '../tokens/index.js';
import type { ChangeSet, FileChange, ProgressCallback, ScannedFileRecord, TextFileRecord } from '../types.js';
import { compileDirExcludes } from '../walk/dir-excludes.js';
import { compilePathPatterns } from '../walk/path-patterns.js';
import { collectFiles } from './collect-files.js';
import type { RunScanDeps, ScanInput, ScanReport } from './run-scan.js';
import { summarize } from './summarize.js';
import { readExactlyInto } from '../io/read-exactly.js';
import { writeAll } from '../io/write-all.js';

/** The report's `changes` block: the digest's two commits, its counts and every changed path it kept. */
export interface ChangeDigestReport extends ChangeDigestBlock {
  files: Array<{
    path: string;
    status: 'added' | 'modified' | 'renamed' | 'deleted';
    old_path: string | null;
    similarity: number | null;
    binary: boolean;
    /** Tokens of the diff as the outputs hold it; 0 for a binary file. */
    diff_tokens: number;
  }>;
}

const TEXT_FORMATS = ['txt', 'md', 'json'] as const;

/**
 * Writes `output.txt|md|json` (and the ZIP bundle with `create_zip`) of a change digest. A changed
 * file is kept when the walk keeps its new path (patterns, folders, subdir, ignore files, size
 * limits: as in a scan); a deleted one when the request's patterns, folders, subdir and
 * `docs_only` keep its old path. Diffs are checked for secrets as texts are, and redacted with them.
 */
export async function scanChanges(
  input: ScanInput & { changes: ChangeSet },
  deps: RunScanDeps,
  countTokens: CountTokens,
  onProgress: ProgressCallback,
  repository: RepositoryBlock,
  addZip: AddZip,
): Promise<ScanReport> {
  if (input.options.maxTokensPerPart !== null)
    throw new ScanError(
      'INVALID_REQUEST',
      'base_ref (a change digest) cannot be cut into parts; leave max_tokens_per_part out, or narrow the digest with include_patterns.',
    );
  // The new texts wait in a spool, the diffs in git's file, until the outputs are written.
  const spool = await ContentSpool.open(input.outDir);
  try {
    const diffs = await DiffFile.open(input.changes.diffFile);
    try {
      return await digestChanges({ spool, diffs }, input, deps, countTokens, onProgress, repository, addZip);
    } finally {
      await diffs.close();
    }
  } finally {
    await spool.close();
  }
}

async function digestChanges(
  { spool, diffs }: { spool: ContentSpool; diffs: DiffFile },
  ...[input, deps, countTokens, onProgress, repository, addZip]: Parameters<typeof scanChanges>
): Promise<ScanReport> {
  const { options, changes } = input;
  const inNewTree = new Map(changes.changes.filter((c) => c.status !== 'deleted').map((c) => [c.path, c]));
  const texts = new Map<string, { record: TextFileRecord; content: SpooledFile }>();
  const collected = await collectFiles(
    { ...input, exactTokens: true, only: new Set(inNewTree.keys()) },
    deps,
    countTokens,
    async (record, content) => {
      // Valid only while this call runs (process-files.ts): the spool keeps a copy.
      await spool.add({ ...record, tokens: record.tokens ?? 0 }, content);
      texts.set(record.path, { record, content: spool.spooled[spool.spooled.length - 1] as SpooledFile });
    },
    onProgress,
  );
  await spool.end();
  onProgress({ phase: 'render', files_done: collected.walkedPaths.length, files_total: collected.walkedPaths.length });
  const renderStart = performance.now();
  const assets = new Map(collected.assets.map((asset) => [asset.path, asset]));
  const keepsRemoved = removedPathFilter(input);
  const baseSource = { ...input.source, ref: changes.baseCommit, commit: changes.baseCommit };

  const entries: HeldEntry[] = [];
  for (const change of changes.changes) {
    const text = texts.get(change.path);
    if (change.status === 'deleted') {
      if (!keepsRemoved(change.path)) continue;
      const byName = classifyByName(carriedPath(change.path));
      const record: TextFileRecord | null =
        change.binary || byName.kind === 'asset'
          ? null
          : {
              path: change.path,
              subcategory: byName.kind === 'text' ? byName.subcategory : 'other',
              size_bytes: 0,
              tokens_estimate: 0,
              url: buildFileUrl(baseSource, change.path),
            };
      entries.push(heldEntry(change, record, null, record ? change.diff : null, null));
    } else if (text) {
      entries.push(heldEntry(change, text.record, null, change.diff, text.content));
    } else if (assets.has(change.path)) {
      entries.push(heldEntry(change, null, assets.get(change.path) ?? null, null, null));
    }
    // Otherwise the walk left it out (a pattern, an ignore file, too large …): so does the digest.
  }

  const secrets = collected.secrets;
  const withDiff = entries.filter((e) => e.diff !== null && e.diff.length > 0);
  const shared = new SharedTextBuffer();
  for (const batch of batchesOf(withDiff, diffBytes)) {
    const into = shared.views(batch.map(diffBytes));
    const batchDiffs = await Promise.all(batch.map((e, i) => diffs.read(e, into[i] as Uint8Array)));
    if (secrets !== null) await checkDiffs(batch, batchDiffs, secrets, deps);
    const counts = await countTokens(batchDiffs, input.signal);
    batch.forEach((entry, i) => (entry.diffTokens = counts[i] ?? 0));
  }
  // A file's count is of every text the outputs hold of it: its diff and its new text.
  const files: ScannedFileRecord[] = [];
  for (const entry of entries) {
    if (entry.record === null) continue;
    const tokens = (entry.record.tokens ?? 0) + entry.diffTokens;
    entry.record = { ...entry.record, tokens, tokens_estimate: tokens };
    files.push(entry.record as ScannedFileRecord);
  }
  const keptAssets = entries.flatMap((e) => (e.asset ? [e.asset] : []));
  const summary = summarize(files, keptAssets, true);
  const count = (status: string): number => entries.filter((e) => e.change.status === status).length;
  const digest: ChangeDigestBlock = {
    base_ref: changes.baseRef,
    base_commit: changes.baseCommit,
    head_commit: input.source.commit,
    counts: {
      added: count('added'),
      modified: count('modified'),
      renamed: count('renamed'),
      deleted: count('deleted'),
      binary: entries.filter((e) => e.record === null).length,
    },
  };
  const changedPaths = new Set(entries.map((e) => e.change.path));
  // The walk's skipped paths of the whole tree, narrowed to the changed ones (or a pruned folder holding one).
  const changedNew = [...inNewTree.keys()];
  const skipped = collected.skipped.filter((s) =>
    s.path.endsWith('/') ? changedNew.some((p) => p.startsWith(s.path)) : inNewTree.has(s.path),
  );
  const keptNewPaths = collected.walkedPaths.filter((p) => changedPaths.has(p));
  const ctx: DigestContext = {
    repository,
    encoding: input.encoding,
    digest,
    tree: options.skipTree ? null : renderTree(input.repoName, keptNewPaths, options.treeDepth),
    lite: options.lite,
    summary,
    skippedCount: skipped.length,
  };
  const load = readAhead(entries, shared, async (entry, diffInto, contentInto) => ({
    diff: entry.diff === null ? null : await diffs.read(entry, diffInto),
    content: entry.content === null ? null : await spool.read(entry.content, contentInto),
  }));
  const artifacts: WrittenArtifact[] = [];
  try {
    for (const format of TEXT_FORMATS) {
      input.signal?.throwIfAborted();
      artifacts.push(await writeArtifact(join(input.outDir, ARTIFACT_FILE_NAMES[format]), format, ctx, entries, load));
    }
    const report: ScanReport = {
      repository,
      options: toWireOptions(options),
      encoding: input.encoding,
      summary,
      tree: ctx.tree,
      files,
      assets: keptAssets,
      skipped,
      artifacts,
      timings: {
        walk_ms: Math.round(collected.walkMs),
        read_ms: Math.round(collected.readMs),
        render_ms: Math.round(performance.now() - renderStart),
        zip_ms: 0,
        total_ms: 0,
      },
      ...(secrets === null ? {} : { secrets }),
      changes: {
        ...digest,
        files: entries.map((e) => ({
          path: e.change.path,
          status: e.change.status,
          old_path: e.change.oldPath,
          similarity: e.change.similarity,
          binary: e.record === null,
          diff_tokens: e.diffTokens,
        })),
      },
    };
    if (options.createZip) {
      const assetAbsPaths = keptAssets.map((a) => collected.assetAbsPaths[collected.assets.indexOf(a)] as string);
      await addZip(
        report,
        { assets: keptAssets, assetAbsPaths },
        artifacts.map((a) => a.file),
      );
    }
    return report;
  } catch (error) {
    await Promise.allSettled(
      Object.values(ARTIFACT_FILE_NAMES).map((name) => rm(join(input.outDir, name), { force: true })),
    );
    throw error;
  }
}

/** A changed path the digest shows, with where its texts wait until they are written. */
interface HeldEntry extends DigestEntry {
  /** Its patch in git's diff file; null when no diff is shown (a binary file). */
  diff: FileChange['diff'] | null;
  /** Its redacted diff, when secrets were found in it (few are: held in memory). */
  redactedDiff: Uint8Array | null;
  /** Its new text in the spool; null for a deleted or binary file. */
  content: SpooledFile | null;
  /** Tokens of its diff as the outputs hold it. */
  diffTokens: number;
}

function heldEntry(
  change: FileChange,
  record: TextFileRecord | null,
  asset: DigestEntry['asset'],
  diff: FileChange['diff'] | null,
  content: SpooledFile | null,
): HeldEntry {
  return { change, record, asset, diff, redactedDiff: null, content, diffTokens: 0 };
}

/** Diff bytes checked and counted at once, and text bytes read at once for the outputs. */
const DIFF_BATCH_BYTES = 1 << 20;

/** The entries in order, in batches of about DIFF_BATCH_BYTES by `bytesOf` (a larger entry alone). */
function* batchesOf(entries: readonly HeldEntry[], bytesOf: (entry: HeldEntry) => number): Iterable<HeldEntry[]> {
  let batch: HeldEntry[] = [];
  let bytes = 0;
  for (const entry of entries) {
    const length = bytesOf(entry);
    if (batch.length > 0 && bytes + length > DIFF_BATCH_BYTES) {
      yield batch;
      batch = [];
      bytes = 0;
    }
    batch.push(entry);
    bytes += length;
  }
  if (batch.length > 0) yield batch;
}

const diffBytes = (entry: HeldEntry): number => entry.diff?.length ?? 0;
const contentBytes = (entry: HeldEntry): number => entry.content?.length ?? 0;

/**
 * The entries' texts for a renderer that asks for them in order and is done with one entry's
 * before it asks for the next: a batch of entries' texts is read at once, the reads side by side,
 * into the shared buffer, and the next batch reuses it (one awaited read after another took a
 * whole-repository digest longer than writing it).
 */
function readAhead(
  entries: readonly HeldEntry[],
  shared: SharedTextBuffer,
  read: (entry: HeldEntry, diffInto: Uint8Array, contentInto: Uint8Array) => Promise<DigestTexts>,
): (entry: HeldEntry) => Promise<DigestTexts> {
  const batches = [...batchesOf(entries, (e) => diffBytes(e) + contentBytes(e))];
  const batchOf = new Map(batches.flatMap((batch, i) => batch.map((entry) => [entry, i] as const)));
  let current = -1;
  let texts = new Map<HeldEntry, DigestTexts>();
  return async (entry) => {
    const index = batchOf.get(entry) as number;
    if (index !== current) {
      const batch = batches[index] as HeldEntry[];
      const views = shared.views(batch.flatMap((e) => [diffBytes(e), contentBytes(e)]));
      const loaded = await Promise.all(
        batch.map((e, k) => read(e, views[2 * k] as Uint8Array, views[2 * k + 1] as Uint8Array)),
      );
      texts = new Map(batch.map((e, k) => [e, loaded[k] as DigestTexts]));
      current = index;
    }
    return texts.get(entry) as DigestTexts;
  };
}

/**
 * Texts read back from the diff file and the spool, in one shared buffer reused from batch to batch
 * (and, once the outputs are written, from file to file): the threads that check and count diffs
 * get views of it, as they get views of the read ring's slots in a scan. Fresh buffers, each copied
 * to a thread, piled up in the threads and the main thread until their next collection (about
 * 100 MB more at the peak of a digest of a whole repository).
 */
class SharedTextBuffer {
  private buffer = new SharedArrayBuffer(DIFF_BATCH_BYTES);

  /** Views of the buffer, one of each length, back to back; valid until the next call. */
  views(lengths: number[]): Uint8Array[] {
    const total = lengths.reduce((sum, length) => sum + length, 0);
    if (total > this.buffer.byteLength) this.buffer = new SharedArrayBuffer(total);
    let at = 0;
    return lengths.map((length) => {
      const view = new Uint8Array(this.buffer, at, length);
      at += length;
      return view;
    });
  }
}

/** git's diff output, read a patch at a time. */
class DiffFile {
  private constructor(private readonly handle: FileHandle) {}

  static async open(file: string): Promise<DiffFile> {
    return new DiffFile(await open(file, 'r'));
  }

  /**
   * An entry's diff as the outputs hold it: redacted if it was, else git's bytes (read into `into`,
   * of the diff's length), whose invalid UTF-8 (a file in a legacy charset) is replaced as any
   * text of the outputs would be.
   */
  async read(entry: HeldEntry, into: Uint8Array): Promise<Uint8Array> {
    if (entry.redactedDiff !== null) return entry.redactedDiff;
    const range = entry.diff;
    if (range === null || range.length === 0) return new Uint8Array(0);
    const bytes = await readExactlyInto(this.handle, range.at, into, 'The diff file');
    return isUtf8(bytes) ? bytes : utf8Encode(asBuffer(bytes).toString('utf8'));
  }

  async close(): Promise<void> {
    await this.handle.close().catch(() => undefined);
  }
}

type AddZip = (
  report: ScanReport,
  collected: { assets: ScanReport['assets']; assetAbsPaths: string[] },
  files: string[],
) => Promise<void>;

/**
 * Secret detection of a batch of diffs (`diffs`, in the entries' order), under each file's own
 * name; with `redact` a diff with findings is replaced, in `diffs` and on its entry.
 */
async function checkDiffs(
  entries: HeldEntry[],
  diffs: Uint8Array[],
  secrets: SecretsSummary,
  deps: RunScanDeps,
): Promise<void> {
  const checked: number[] = [];
  entries.forEach((entry, i) => {
    if ((diffs[i] as Uint8Array).length <= SECRETS_MAX_BYTES) checked.push(i);
    else if (!secrets.not_checked.includes(entry.change.path)) secrets.not_checked.push(entry.change.path);
  });
  if (checked.length === 0) return;
  const scans = await deps.detectSecrets(
    checked.map((i) => diffs[i] as Uint8Array),
    checked.map((i) => (entries[i] as HeldEntry).change.path),
  );
  checked.forEach((i, at) => {
    const scan = scans[at];
    const entry = entries[i] as HeldEntry;
    if (scan === undefined || scan.findings.length === 0) return;
    for (const finding of scan.findings) secrets.findings.push({ path: entry.change.path, ...finding, in: 'diff' });
    secrets.count += scan.findings.length;
    if (secrets.mode === 'redact' && scan.redacted !== undefined) {
      entry.redactedDiff = scan.redacted;
      diffs[i] = scan.redacted;
    }
  });
}

/**
 * Whether a path gone from the new tree would have been kept by the request's selection: the
 * subdir, folder exclusions (the defaults and `exclude_dirs`), `include_patterns` /
 * `exclude_patterns` and `docs_only`. Ignore files are not asked: the ones that applied to it may
 * be gone with it.
 */
function removedPathFilter(input: ScanInput): (path: string) => boolean {
  const { options, source } = input;
  const isExcludedDir = compileDirExcludes(options.excludeDirs);
  const patterns = compilePathPatterns(options.includePatterns, options.excludePatterns);
  return (path) => {
    if (source.subdir !== null && !path.startsWith(`${source.subdir}/`)) return false;
    const segments = path.split('/');
    for (let i = 1; i < segments.length; i++) {
      const folder = segments.slice(0, i).join('/');
      if (isExcludedDir(folder, segments[i - 1] as string) || patterns.excludesFolder(folder)) return false;
    }
    if (!patterns.keepsFile(path)) return false;
    return !options.docsOnly || isDocsPath(carriedPath(path));
  };
}

/** One artifact, front to back, hashed as it is written. */
async function writeArtifact(
  file: string,
  format: (typeof TEXT_FORMATS)[number],
  ctx: DigestContext,
  entries: HeldEntry[],
  load: (entry: HeldEntry) => Promise<DigestTexts>,
): Promise<WrittenArtifact> {
  const handle = await open(file, 'wx');
  const hash = createHash('sha256');
  let bytes = 0;
  const out = new ChunkBuffer(async (data) => {
    hash.update(data);
    bytes += data.byteLength;
    await writeAll(handle, data);
  });
  try {
    for await (const chunk of renderChangeDigest(format, ctx, entries, load)) await out.put(chunk);
    await out.flush();
    await handle.datasync();
  } finally {
    await handle.close();
  }
  return { format, file: ARTIFACT_FILE_NAMES[format], bytes, sha256: hash.digest('hex') };
}
