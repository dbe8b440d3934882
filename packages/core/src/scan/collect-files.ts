import { buildFileUrl } from '../render/file-url.js';
import { processFiles } from './process-files.js';
import type { ProcessedFile } from './process-files.js';
import type { ScanDeps } from './scan-deps.js';
import type {
  AssetRecord,
  EngineLimits,
  ProgressCallback,
  ScanOptions,
  SkippedPath,
  SourceInfo,
  TextFileRecord,
  WalkResult,
} from '../types.js';

export interface CollectInput {
  root: string;
  source: SourceInfo;
  options: ScanOptions;
  limits: EngineLimits;
  signal?: AbortSignal;
}

export interface Collected {
  files: TextFileRecord[];
  assets: AssetRecord[];
  skipped: SkippedPath[];
  /** Kept paths (textual and assets) in walk order: what the tree draws. */
  keptPaths: string[];
  walkMs: number;
  readMs: number;
}

/** Walk the tree, filter it, then read/classify/count every kept file once, in order. */
export async function collectFiles(
  input: CollectInput,
  deps: ScanDeps,
  countTokens: (contents: Uint8Array[]) => Promise<number[]> | number[],
  /** Receives each textual file with its UTF-8 content, in walk order. */
  onText: ((record: TextFileRecord, content: Uint8Array) => Promise<void>) | null,
  onProgress: ProgressCallback,
): Promise<Collected> {
  const { options, limits, source } = input;
  const walkStart = performance.now();
  onProgress({ phase: 'walk', files_done: 0, files_total: 0 });
  const walked: WalkResult = await deps.walk({
    root: input.root,
    subdir: source.subdir,
    options,
    limits,
    docsOnly: options.docsOnly,
  });
  const walkMs = performance.now() - walkStart;
  input.signal?.throwIfAborted();

  const files: TextFileRecord[] = [];
  const assets: AssetRecord[] = [];
  const skipped: SkippedPath[] = [...walked.skipped];
  const keptPaths: string[] = [];
  const total = walked.files.length;
  onProgress({ phase: 'read', files_done: 0, files_total: total });
  const readStart = performance.now();

  const take = async (item: ProcessedFile): Promise<void> => {
    const { path, size } = item.file;
    if (item.kind === 'skipped') {
      skipped.push({ path, reason: item.reason });
      return;
    }
    keptPaths.push(path);
    const url = buildFileUrl(source, path);
    if (item.kind === 'asset') {
      assets.push({ path, subcategory: item.subcategory, size_bytes: size, url });
      return;
    }
    const record: TextFileRecord = { path, subcategory: item.subcategory, size_bytes: size, tokens_estimate: item.tokens, url };
    if (item.encoding) record.encoding = item.encoding;
    files.push(record);
    if (onText) await onText(record, item.content);
  };

  await processFiles(
    walked.files,
    { readFiles: deps.readFiles, classifyByName: deps.classifyByName, classifyContent: deps.classifyContent, countTokens },
    {
      maxFileBytes: Math.min(limits.maxFileBytes, options.sizeLimit ?? Number.POSITIVE_INFINITY),
      concurrency: 4,
      batchFiles: 64,
      batchBytes: 1 << 20,
      readBufferBytes: 8 << 20,
      ...(input.signal ? { signal: input.signal } : {}),
    },
    async (items, done) => {
      for (const item of items) await take(item);
      onProgress({ phase: 'read', files_done: done, files_total: total });
    },
  );
  skipped.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { files, assets, skipped, keptPaths, walkMs, readMs: performance.now() - readStart };
}
