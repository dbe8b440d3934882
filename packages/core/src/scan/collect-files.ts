import { buildFileUrl } from '../render/file-url.js';
import { FileFeed } from './file-feed.js';
import { processFiles } from './process-files.js';
import type { ProcessedFile } from './process-files.js';
import type { ScanDeps } from './scan-deps.js';
import type { CountTokens } from '../tokens/token-pool.js';
import type { SecretsSummary } from '../secrets/secret-scan.js';
import { COMPRESS_MAX_BYTES, COMPRESS_TIMEOUT_MS } from '../compress/code-transform.js';
import type { CodeTransform, CompressionSummary } from '../compress/code-transform.js';
import type {
  AssetRecord,
  EngineLimits,
  ProgressCallback,
  ScanOptions,
  SkippedPath,
  SkipReason,
  SourceInfo,
  TextFileRecord,
} from '../types.js';
import type { GitWorkTree } from '../walk/git-work-tree.js';

export interface CollectInput {
  /** Real path of the repository root, no link on the way (the subdir, if any, is in `source.subdir`). */
  root: string;
  source: SourceInfo;
  options: ScanOptions;
  limits: EngineLimits;
  signal?: AbortSignal;
  /** Paths the walk skips for what the source says they are (WalkInput.sourceSkips). */
  sourceSkips?: ReadonlyMap<string, SkipReason>;
  /** When the tree is a git work tree or a clone: its tracked files and `.git/info/exclude` (WalkInput.git). */
  git?: GitWorkTree;
  /**
   * Files of the tree not on disk (WalkInput.absent), given by ScanDeps.fileReuse or readAbsent: a
   * clone left them in its object store or on the server, or, in a change digest, they are outside
   * the change.
   */
  absent?: ReadonlyMap<string, number>;
  /** countTokens counts exactly (a full scan): each record carries its count as `tokens` too. */
  exactTokens?: boolean;
  /** Only these walked paths are kept (a change digest's changed files); the walk's other files are neither read nor drawn. */
  only?: ReadonlySet<string>;
}

export interface Collected {
  files: TextFileRecord[];
  assets: AssetRecord[];
  /** The real path of each asset, in the order of `assets` (carried as path-bytes.ts says). */
  assetAbsPaths: string[];
  skipped: SkippedPath[];
  /** Every file the walk found, in walk order: what the tree draws (a file that then fails to read is drawn and listed as skipped). */
  walkedPaths: string[];
  /** From the start until the walk ended (reading overlaps it). */
  walkMs: number;
  /** From the end of the walk until the last file was read, classified and counted. */
  readMs: number;
  /** What secret detection found; null with `secrets: off`. */
  secrets: SecretsSummary | null;
  /** What compressed code did; null with neither `compress` nor `remove_comments`. */
  compression: CompressionSummary | null;
}

/**
 * Walk the tree, filter it, and read/classify/count every kept file once, in order. Reading
 * starts with the walk's first chunk of files, not after its last: progress says `walk` (the
 * total still growing) until the walk ends, then `read` with the final total. `onWalked` hears
 * of the walk's end once, in turn with `onText`: before the first text after it, at the latest
 * before this returns.
 */
export async function collectFiles(
  input: CollectInput,
  deps: ScanDeps,
  countTokens: CountTokens,
  /** Receives each textual file with its UTF-8 content, in walk order. */
  onText: ((record: TextFileRecord, content: Uint8Array) => Promise<void>) | null,
  onProgress: ProgressCallback,
  onWalked: (walkedPaths: string[]) => Promise<void> = () => Promise.resolve(),
): Promise<Collected> {
  const { options, limits, source } = input;
  const started = performance.now();
  onProgress({ phase: 'walk', files_done: 0, files_total: 0 });
  // A file thread starts while the walk runs, not when the first texts wait for it.
  if (options.secrets !== 'off') deps.detectSecrets([], []).catch(() => {});
  const feed = new FileFeed();
  const walkedPaths: string[] = [];
  let walkMs: number | null = null;
  const walkSkipped: SkippedPath[] = [];
  const walking = deps
    .walk(
      {
        root: input.root,
        subdir: source.subdir,
        options,
        limits,
        docsOnly: options.docsOnly,
        sourceSkips: input.sourceSkips,
        ...(input.git === undefined ? {} : { git: input.git }),
        ...(input.absent === undefined ? {} : { absent: input.absent }),
      },
      (walked) => {
        const only = input.only;
        const chunk = only === undefined ? walked : walked.filter((file) => only.has(file.path));
        for (const file of chunk) walkedPaths.push(file.path);
        if (chunk.length > 0) feed.push(chunk);
      },
      input.signal,
    )
    .then(
      (skipped) => {
        for (const entry of skipped) if (!isClonesOwnGitFolder(source, entry)) walkSkipped.push(entry);
        walkMs = performance.now() - started;
        feed.end();
      },
      (error: unknown) => feed.fail(error),
    );

  const files: TextFileRecord[] = [];
  const assets: AssetRecord[] = [];
  const assetAbsPaths: string[] = [];
  const skipped: SkippedPath[] = [];
  const secrets: SecretsSummary | null =
    options.secrets === 'off' ? null : { mode: options.secrets, count: 0, findings: [], not_checked: [] };
  const transform: CodeTransform | null =
    options.compress === 'none' && !options.removeComments
      ? null
      : {
          signatures: options.compress === 'signatures',
          removeComments: options.removeComments,
          maxBytes: limits.compressMaxBytes ?? COMPRESS_MAX_BYTES,
          timeoutMs: limits.compressTimeoutMs ?? COMPRESS_TIMEOUT_MS,
        };
  const compression: CompressionSummary | null =
    transform === null
      ? null
      : {
          compress: options.compress,
          remove_comments: options.removeComments,
          files: 0,
          tokens_before: 0,
          tokens_after: 0,
          not_compressed: [],
        };
  let announced = false;
  const announceWalked = async (): Promise<void> => {
    if (announced || walkMs === null) return;
    announced = true;
    await onWalked(walkedPaths);
  };

  const take = async (item: ProcessedFile): Promise<void> => {
    const { path, size } = item.file;
    if (item.kind === 'skipped') {
      skipped.push({ path, reason: item.reason });
      return;
    }
    const url = buildFileUrl(source, path);
    if (item.kind === 'asset') {
      assets.push({ path, subcategory: item.subcategory, size_bytes: size, url });
      assetAbsPaths.push(item.file.absPath);
      return;
    }
    const record: TextFileRecord = input.exactTokens
      ? {
          path,
          subcategory: item.subcategory,
          size_bytes: size,
          tokens: item.tokens,
          tokens_estimate: item.tokens,
          url,
        }
      : { path, subcategory: item.subcategory, size_bytes: size, tokens_estimate: item.tokens, url };
    if (item.encoding) record.encoding = item.encoding;
    if (item.replacements > 0) record.replacements = item.replacements;
    if (secrets !== null && item.secrets !== null) {
      if (!item.secrets.checked) secrets.not_checked.push(path);
      for (const finding of item.secrets.findings) secrets.findings.push({ path, ...finding });
      secrets.count += item.secrets.findings.length;
      if (item.secrets.redacted) record.redactions = item.secrets.findings.length;
    }
    if (compression !== null && item.compression !== null) {
      record.compression = { result: item.compression.result, tokens_before: item.compression.tokensBefore };
      if (item.compression.result === 'compressed') {
        compression.files++;
        compression.tokens_before += item.compression.tokensBefore;
        compression.tokens_after += item.tokens;
      } else compression.not_compressed.push({ path, reason: item.compression.result });
    }
    files.push(record);
    if (deps.fileReuse?.learn && item.reused !== true)
      await deps.fileReuse.learn({
        path,
        size,
        subcategory: item.subcategory,
        encoding: item.encoding,
        replacements: item.replacements,
        tokens: item.tokens,
        secrets: item.secrets,
        compression: item.compression,
        content: item.content,
      });
    if (onText) await onText(record, item.content);
  };

  try {
    await processFiles(
      feed,
      {
        readFiles: deps.readFiles,
        classifyByName: deps.classifyByName,
        classifyContent: deps.classifyContent,
        countTokens,
        detectSecrets: deps.detectSecrets,
        transformCode: deps.transformCode,
        ...(deps.fileReuse ? { reuse: deps.fileReuse } : {}),
        ...(deps.readAbsent ? { readAbsent: deps.readAbsent } : {}),
      },
      {
        secrets: options.secrets,
        transform,
        maxFileBytes: Math.min(limits.maxFileBytes, options.sizeLimit ?? Number.POSITIVE_INFINITY),
        concurrency: 4,
        batchFiles: 64,
        batchBytes: 1 << 20,
        readBufferBytes: 8 << 20,
        ...(input.signal ? { signal: input.signal } : {}),
      },
      async (items, done) => {
        await announceWalked();
        for (const item of items) await take(item);
        onProgress({ phase: walkMs === null ? 'walk' : 'read', files_done: done, files_total: walkedPaths.length });
      },
    );
  } catch (error) {
    // Whatever the walk still finds is dropped, not held, while it winds down.
    feed.close();
    throw error;
  } finally {
    // No walk outlives the scan, whichever way it ends.
    await walking;
  }
  await announceWalked();
  // Said once more now that the walk is over: a tree read as fast as it was walked shows `read` too.
  onProgress({ phase: 'read', files_done: walkedPaths.length, files_total: walkedPaths.length });
  // One by one: spreading a walk's skipped paths into push() puts each on the stack, and
  // about 124 000 of them overflow it.
  for (const entry of walkSkipped) skipped.push(entry);
  skipped.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const readMs = performance.now() - started;
  return {
    files,
    assets,
    assetAbsPaths,
    skipped,
    walkedPaths,
    walkMs: walkMs ?? readMs,
    readMs: readMs - (walkMs ?? readMs),
    secrets,
    compression,
  };
}

/**
 * The `.git` folder at the top of a clone is git's, not the commit's (git refuses a tree that
 * holds one), so a remote scan never lists it; a local folder's or an upload's is theirs.
 */
function isClonesOwnGitFolder(source: SourceInfo, entry: SkippedPath): boolean {
  return source.type === 'remote' && entry.path === '.git/';
}
