import type { ContentClassification, NameClassification } from '../classify/index.js';
import type { ReadOutcome } from '../io/read-file-bytes.js';
import type { AssetSubcategory, SkipReason, TextSubcategory, WalkedFile } from '../types.js';

export interface FileProcessingDeps {
  readFile: (absPath: string, maxBytes: number) => Promise<ReadOutcome>;
  classifyByName: (path: string) => NameClassification;
  classifyContent: (path: string, bytes: Uint8Array) => ContentClassification;
  /** Token counts for a batch of texts, in order: exact (worker pool) or estimated. */
  countTokens: (texts: string[]) => Promise<number[]> | number[];
}

export type ProcessedFile =
  | { kind: 'text'; file: WalkedFile; subcategory: TextSubcategory; text: string; encoding: string | null; tokens: number }
  | { kind: 'asset'; file: WalkedFile; subcategory: AssetSubcategory }
  | { kind: 'skipped'; file: WalkedFile; reason: SkipReason };

export interface ProcessOptions {
  maxFileBytes: number;
  /** Batches processed at once: enough to keep every tokenizer thread and the disk busy. */
  concurrency: number;
  batchFiles: number;
  batchBytes: number;
  signal?: AbortSignal;
}

function makeBatches(files: WalkedFile[], maxFiles: number, maxBytes: number): WalkedFile[][] {
  const batches: WalkedFile[][] = [];
  let current: WalkedFile[] = [];
  let bytes = 0;
  for (const file of files) {
    if (current.length > 0 && (current.length >= maxFiles || bytes + file.size > maxBytes)) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    current.push(file);
    bytes += file.size;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

async function processBatch(batch: WalkedFile[], deps: FileProcessingDeps, maxFileBytes: number): Promise<ProcessedFile[]> {
  const items = await Promise.all(
    batch.map(async (file): Promise<ProcessedFile | { kind: 'pending'; file: WalkedFile; subcategory: TextSubcategory; text: string; encoding: string | null }> => {
      const byName = deps.classifyByName(file.path);
      // Assets known by name are never read here: only the ZIP bundle copies them.
      if (byName.kind === 'asset') return { kind: 'asset', file, subcategory: byName.subcategory };
      const read = await deps.readFile(file.absPath, maxFileBytes);
      if (!read.ok) return { kind: 'skipped', file, reason: read.reason };
      const content = deps.classifyContent(file.path, read.bytes);
      if (!content.textual) return { kind: 'asset', file, subcategory: content.subcategory };
      return { kind: 'pending', file, subcategory: content.subcategory, text: content.text, encoding: content.encoding };
    }),
  );
  const texts: string[] = [];
  for (const item of items) if (item.kind === 'pending') texts.push(item.text);
  const counts = texts.length > 0 ? await deps.countTokens(texts) : [];
  let next = 0;
  return items.map((item) => (item.kind === 'pending' ? { ...item, kind: 'text', tokens: counts[next++] ?? 0 } : item));
}

type Settled = { ok: true; items: ProcessedFile[] } | { ok: false; error: unknown };

/**
 * Read, classify and count every walked file once, in small batches processed concurrently,
 * and hand results to `emit` strictly in walk order. At most `concurrency` batches are held in
 * memory, so peak memory does not grow with the repository.
 */
export async function processFiles(
  files: WalkedFile[],
  deps: FileProcessingDeps,
  options: ProcessOptions,
  emit: (items: ProcessedFile[], filesDone: number) => Promise<void> | void,
): Promise<void> {
  const batches = makeBatches(files, options.batchFiles, options.batchBytes);
  const inflight: Array<Promise<Settled>> = [];
  let next = 0;
  let done = 0;
  const start = (batch: WalkedFile[]): Promise<Settled> =>
    processBatch(batch, deps, options.maxFileBytes).then(
      (items): Settled => ({ ok: true, items }),
      (error: unknown): Settled => ({ ok: false, error }),
    );
  while (next < batches.length || inflight.length > 0) {
    options.signal?.throwIfAborted();
    while (inflight.length < options.concurrency && next < batches.length) inflight.push(start(batches[next++] ?? []));
    const settled = await (inflight.shift() as Promise<Settled>);
    if (!settled.ok) {
      // Let the batches already started finish before failing, so no read outlives the scan.
      await Promise.all(inflight);
      throw settled.error;
    }
    done += settled.items.length;
    await emit(settled.items, done);
  }
}
