import type { ContentClassification, NameClassification } from '../classify/index.js';
import type { ReadOutcome, ReadRequest } from '../io/read-file-bytes.js';
import { carriedPath } from '../path-bytes.js';
import type { CountTokens } from '../tokens/token-pool.js';
import { returnRing, takeRing } from '../io/read-ring.js';
import type { ReadRing, RingRegion } from '../io/read-ring.js';
import type { AssetSubcategory, SkipReason, TextSubcategory, WalkedFile } from '../types.js';
import type { FileFeed } from './file-feed.js';
import { SECRETS_MAX_BYTES } from '../secrets/secret-scan.js';
import type { SecretFinding, SecretScan } from '../secrets/secret-scan.js';
import type { SecretsMode } from '@reposcan/contracts/vocabulary';
import { codeLanguageOf } from '../compress/code-transform.js';
import type { CodeLanguage, CodeTransform, NotCompressedReason, TransformOutcome } from '../compress/code-transform.js';
import type { AbsentFileReader } from './absent-file-reader.js';
import type { FileReuse, FoundText } from './file-reuse.js';

export interface FileProcessingDeps {
  /** Reads a batch of files, each into its `into` when it has room; outcomes in request order. */
  readFiles: (requests: readonly ReadRequest[], maxBytes: number) => Promise<ReadOutcome[]>;
  classifyByName: (path: string) => NameClassification;
  classifyContent: (path: string, bytes: Uint8Array) => ContentClassification;
  /** Token counts for a batch of UTF-8 contents, in order: exact (worker pool) or estimated. */
  countTokens: CountTokens;
  /** Secret findings of a batch of UTF-8 contents, in order (only asked with `secrets` other than `off`). */
  detectSecrets?: (contents: Uint8Array[], names: string[]) => Promise<SecretScan[]>;
  /** Compressed code or comment removal of a batch of UTF-8 contents, in order (only asked with a transform). */
  transformCode?: (
    contents: Uint8Array[],
    languages: CodeLanguage[],
    transform: CodeTransform,
  ) => Promise<TransformOutcome[]>;
  /** Files an earlier scan processed: taken from there, not read. */
  reuse?: FileReuse;
  /** Files not on disk whose bytes the source holds: read from there. */
  readAbsent?: AbsentFileReader;
}

/** What compressed code made of one textual file: null without a transform or outside its languages. */
export type FileCompression = {
  result: 'compressed' | NotCompressedReason;
  /** The count of the text before it was transformed (after any redaction). */
  tokensBefore: number;
} | null;

/** What secret detection made of one textual file: null with `secrets: off`. */
export type FileSecrets = {
  /** False when the file is over SECRETS_MAX_BYTES. */
  checked: boolean;
  findings: SecretFinding[];
  /** True when `content` and the count are of the redacted text. */
  redacted: boolean;
} | null;

/**
 * One file after reading. A text's `content` is valid only until `emit` returns: its memory is
 * reused for later batches, so whoever keeps content must copy it.
 */
export type ProcessedFile =
  | {
      kind: 'text';
      file: WalkedFile;
      subcategory: TextSubcategory;
      content: Uint8Array;
      encoding: string | null;
      replacements: number;
      tokens: number;
      secrets: FileSecrets;
      compression: FileCompression;
      /** Taken from an earlier scan (FileReuse), not processed here. */
      reused?: true;
    }
  | { kind: 'asset'; file: WalkedFile; subcategory: AssetSubcategory }
  | { kind: 'skipped'; file: WalkedFile; reason: SkipReason };

type Pending = Extract<Classified, { kind: 'pending' }>;

type Classified =
  | Exclude<ProcessedFile, { kind: 'text' }>
  | {
      kind: 'pending';
      file: WalkedFile;
      subcategory: TextSubcategory;
      content: Uint8Array;
      encoding: string | null;
      replacements: number;
      secrets: FileSecrets;
      /** Set once its language's transform answered; the count before it is added at the end. */
      outcome: TransformOutcome | null;
    }
  | { kind: 'stored'; file: WalkedFile; stored: FoundText };

export interface ProcessOptions {
  maxFileBytes: number;
  /** Batches processed at once: enough to keep every tokenizer thread and the disk busy. */
  concurrency: number;
  batchFiles: number;
  batchBytes: number;
  /** Shared memory for the reads of the batches in flight; bounds what a scan holds whatever comes in a row. */
  readBufferBytes: number;
  /** Secret detection; `off` (the default here) asks detectSecrets nothing. */
  secrets?: SecretsMode;
  /** Compressed code or comment removal; none (the default) asks transformCode nothing. */
  transform?: CodeTransform | null;
  signal?: AbortSignal;
}

interface PlannedFile {
  file: WalkedFile;
  byName: NameClassification;
  /**
   * Bytes reserved for its read (the reader wants one of headroom); 0 for assets known by name,
   * which are never read here. A stored text is loaded into its room (as long as a read of it
   * would take), so the ring bounds the stored texts loaded ahead as it bounds reads.
   */
  room: number;
  /** What an earlier scan made of it (FileReuse). */
  stored: FoundText | undefined;
}

interface Batch {
  files: PlannedFile[];
  /** Total room of its files: the ring region it needs. */
  room: number;
}

/**
 * Batches in walk order, planned as files arrive: a plan for every file at once would live through
 * the whole scan. While the walk is behind, a partly filled batch goes out rather than waiting, so
 * the tokenizer threads start with the first folders.
 */
async function* planBatches(feed: FileFeed, deps: FileProcessingDeps, options: ProcessOptions): AsyncGenerator<Batch> {
  let current: Batch = { files: [], room: 0 };
  for (;;) {
    let arrived = feed.takeArrived();
    if (arrived.length === 0) {
      if (current.files.length > 0) {
        yield current;
        current = { files: [], room: 0 };
      }
      if (!(await feed.more())) break;
      arrived = feed.takeArrived();
    }
    for (const file of arrived) {
      const byName = deps.classifyByName(carriedPath(file.path));
      const stored = byName.kind === 'asset' ? undefined : deps.reuse?.find(file.path, file.size);
      const room =
        byName.kind === 'asset'
          ? 0
          : Math.min(stored === undefined ? file.size : stored.bytes, options.maxFileBytes) + 1;
      if (
        current.files.length > 0 &&
        (current.files.length >= options.batchFiles || current.room + room > options.batchBytes)
      ) {
        yield current;
        current = { files: [], room: 0 };
      }
      current.files.push({ file, byName, room, stored });
      current.room += room;
    }
  }
  if (current.files.length > 0) yield current;
}

async function processBatch(
  batch: Batch,
  region: RingRegion | null,
  ring: ReadRing,
  deps: FileProcessingDeps,
  options: ProcessOptions,
): Promise<ProcessedFile[]> {
  const { maxFileBytes, signal } = options;
  let offset = region?.start ?? 0;
  const requests: ReadRequest[] = [];
  const elsewhere: { path: string; into: Uint8Array }[] = [];
  /** For each read, in batch order: whether readAbsent gives it. */
  const readsElsewhere: boolean[] = [];
  const storedPaths: string[] = [];
  let storedBytes = 0;
  let storedRoom = 0;
  for (const { file, byName, room, stored } of batch.files) {
    if (stored !== undefined) {
      storedPaths.push(file.path);
      storedBytes += stored.bytes;
      storedRoom += room;
    }
    if (byName.kind === 'asset' || stored !== undefined) continue;
    const into = new Uint8Array(ring.memory, offset, room);
    offset += room;
    const absent = deps.readAbsent?.has(file.path) === true;
    readsElsewhere.push(absent);
    if (absent) elsewhere.push({ path: file.path, into });
    else requests.push({ absPath: file.absPath, into });
  }
  // Stored texts load, into the room the batch holds for them after its reads, while the others
  // are read and counted. A text can be longer than its file (decoded to UTF-8, redacted) and than
  // the ring: a batch with one loads its stored texts into memory of their own.
  const loading =
    storedPaths.length > 0 && deps.reuse
      ? deps.reuse.load(
          storedPaths,
          storedBytes <= storedRoom ? new Uint8Array(ring.memory, offset, storedBytes) : new Uint8Array(storedBytes),
        )
      : Promise.resolve([]);
  loading.catch(() => {});
  const [fromDisk, fromElsewhere] = await Promise.all([
    requests.length > 0 ? deps.readFiles(requests, maxFileBytes) : [],
    elsewhere.length > 0 && deps.readAbsent ? deps.readAbsent.read(elsewhere, maxFileBytes) : [],
  ]);
  let nextDisk = 0;
  let nextElsewhere = 0;
  const reads = readsElsewhere.map((absent) => (absent ? fromElsewhere[nextElsewhere++] : fromDisk[nextDisk++]));
  let nextRead = 0;
  const items = batch.files.map(({ file, byName, stored }): Classified => {
    if (stored !== undefined) return { kind: 'stored', file, stored };
    if (byName.kind === 'asset') return { kind: 'asset', file, subcategory: byName.subcategory };
    const read = reads[nextRead++] as ReadOutcome;
    if (!read.ok) return { kind: 'skipped', file, reason: read.reason };
    // Changed between the walk and its read (appended to, rewritten, truncated): the walk's size,
    // the tree and what was read no longer describe one file, so it is listed as unreadable.
    if (read.bytes.length !== file.size) return { kind: 'skipped', file, reason: 'unreadable' };
    const content = deps.classifyContent(carriedPath(file.path), read.bytes);
    if (!content.textual) return { kind: 'asset', file, subcategory: content.subcategory };
    return {
      kind: 'pending',
      file,
      subcategory: content.subcategory,
      content: content.content,
      encoding: content.encoding,
      replacements: content.replacements,
      secrets: null,
      outcome: null,
    };
  });
  const pending = items.filter((item) => item.kind === 'pending');
  const contents = pending.map((item) => item.content);
  const mode = options.secrets ?? 'off';
  const transform = options.transform ?? null;
  // Checked and transformed while the texts are counted: a finding is rare, and only a redacted text
  // is counted again (its count, and its token cache key, are then of the redacted bytes). A
  // transformed text is counted once more, the first count being the one before the transform.
  const [counts] = await Promise.all([
    contents.length > 0 ? deps.countTokens(contents, signal) : [],
    mode === 'off' ? undefined : checkSecrets(pending, mode, deps, signal),
    transform === null ? undefined : transformTexts(pending, transform, deps, signal),
  ]);
  const redacted = pending.flatMap((item, i) => (item.secrets?.redacted ? [i] : []));
  if (redacted.length > 0) {
    const again = await deps.countTokens(
      redacted.map((i) => (pending[i] as Pending).content),
      signal,
    );
    redacted.forEach((i, k) => (counts[i] = again[k] ?? 0));
    // The transform saw the text before redaction: the outputs hold the redacted one, transformed.
    if (transform !== null) {
      const again = redacted.map((i) => pending[i] as Pending).filter((item) => item.outcome !== null);
      for (const item of again) item.outcome = null;
      await transformTexts(again, transform, deps, signal);
    }
  }
  const before = [...counts];
  if (transform !== null) {
    const changed = pending.flatMap((item, i) =>
      item.outcome?.result === 'transformed' && item.outcome.content ? [i] : [],
    );
    if (changed.length > 0) {
      const after = await deps.countTokens(
        changed.map((i) => (pending[i] as Pending).outcome as { content: Uint8Array }).map((o) => o.content),
        signal,
      );
      changed.forEach((i, k) => (counts[i] = after[k] ?? 0));
    }
  }
  const storedTexts = await loading;
  let next = 0;
  let nextStored = 0;
  return items.map((item): ProcessedFile => {
    if (item.kind === 'stored') {
      const { bytes: _bytes, ...stored } = item.stored;
      const content = storedTexts[nextStored++] as Uint8Array;
      return { kind: 'text', file: item.file, ...stored, content, reused: true };
    }
    if (item.kind !== 'pending') return item;
    const i = next++;
    const { outcome, ...rest } = item;
    const compression: FileCompression =
      outcome === null
        ? null
        : { result: outcome.result === 'transformed' ? 'compressed' : outcome.result, tokensBefore: before[i] ?? 0 };
    const content = outcome?.result === 'transformed' && outcome.content ? outcome.content : item.content;
    return { ...rest, kind: 'text', content, tokens: counts[i] ?? 0, compression };
  });
}

const DECLARATION_FILE = /\.d\.[cm]?ts$/i;

/** Compressed code or comment removal of the texts in a language it knows: each one's outcome. */
async function transformTexts(
  pending: Pending[],
  transform: CodeTransform,
  deps: FileProcessingDeps,
  signal: AbortSignal | undefined,
): Promise<void> {
  const code: Pending[] = [];
  const languages: CodeLanguage[] = [];
  for (const item of pending) {
    const path = carriedPath(item.file.path);
    const language = codeLanguageOf(path);
    // A declaration file has no bodies: compressed code alone would parse it for nothing.
    if (language === null || (!transform.removeComments && DECLARATION_FILE.test(path))) continue;
    code.push(item);
    languages.push(language);
  }
  if (code.length === 0) return;
  if (deps.transformCode === undefined) throw new Error('compressed code was asked for without a transform');
  const outcomes = await deps.transformCode(
    code.map((item) => item.content),
    languages,
    transform,
  );
  signal?.throwIfAborted();
  code.forEach((item, i) => (item.outcome = outcomes[i] ?? null));
}

/**
 * Secret detection of a batch's texts. A text over SECRETS_MAX_BYTES is marked not checked; with
 * `redact`, a text with findings is replaced by its redacted bytes.
 */
async function checkSecrets(
  pending: Pending[],
  mode: Exclude<SecretsMode, 'off'>,
  deps: FileProcessingDeps,
  signal: AbortSignal | undefined,
): Promise<void> {
  const checked: Pending[] = [];
  for (const item of pending) {
    if (item.content.length > SECRETS_MAX_BYTES) item.secrets = { checked: false, findings: [], redacted: false };
    else checked.push(item);
  }
  if (checked.length === 0) return;
  if (deps.detectSecrets === undefined) throw new Error('secret detection was asked for without a detector');
  const scans = await deps.detectSecrets(
    checked.map((item) => item.content),
    checked.map((item) => item.file.path),
  );
  signal?.throwIfAborted();
  checked.forEach((item, i) => {
    const scan = scans[i] as SecretScan;
    const redact = mode === 'redact' && scan.redacted !== undefined;
    item.secrets = { checked: true, findings: scan.findings, redacted: redact };
    if (redact) item.content = scan.redacted as Uint8Array;
  });
}

type Settled = { ok: true; items: ProcessedFile[] } | { ok: false; error: unknown };

interface InFlight {
  region: RingRegion | null;
  settled: Promise<Settled>;
  /** Set once it settles: batches finish out of order but are emitted in order. */
  result: Settled | null;
}

/**
 * Read, classify and count every walked file once, in small batches processed concurrently,
 * and hand results to `emit` strictly in walk order, one call at a time. Reads land in a ring of
 * shared memory of fixed size that batches take and give back in order, so peak memory does not
 * grow with the repository, nor with how many big files come in a row.
 *
 * A new batch starts whenever one finishes, not only when the oldest does: a big file at the head
 * would otherwise leave every tokenizer thread but one idle until it is counted. Nor does an emit
 * hold the batches back: the next batches are read and counted while it runs (and waits for the
 * disk). Batches hold their ring region until their emit is over, so the ring bounds how far ahead
 * the scan runs.
 */
export async function processFiles(
  feed: FileFeed,
  deps: FileProcessingDeps,
  options: ProcessOptions,
  emit: (items: ProcessedFile[], filesDone: number) => Promise<void> | void,
): Promise<void> {
  const batches = planBatches(feed, deps, options);
  // Any one batch must fit the ring on its own: the largest file, or a full batch of small ones.
  const ring = takeRing(Math.max(options.readBufferBytes, options.maxFileBytes + 1, options.batchBytes));
  const inflight: InFlight[] = [];
  let active = 0;
  let done = 0;
  // The next planned batch; planning may wait for the walk, so it runs alongside the batches.
  const planned: {
    next: IteratorResult<Batch> | null;
    planning: Promise<void> | null;
    failure: { error: unknown } | null;
  } = { next: null, planning: null, failure: null };
  const plan = (): void => {
    planned.planning = batches.next().then(
      (result) => {
        planned.next = result;
        planned.planning = null;
      },
      (error: unknown) => {
        planned.failure = { error };
        planned.planning = null;
      },
    );
  };
  plan();
  // Emits run one after another, behind the loop; each gives its batch's region back when it ends.
  let emitting: Promise<void> = Promise.resolve();
  // An abort wakes the loop below even while every batch in flight is still running.
  let wake = (): void => {};
  const aborted = new Promise<void>((resolve) => (wake = resolve));
  options.signal?.addEventListener('abort', wake, { once: true });
  const emits = new Set<Promise<void>>();
  const emitFailed: { failure: { error: unknown } | null } = { failure: null };
  try {
    for (;;) {
      options.signal?.throwIfAborted();
      if (planned.failure) throw planned.failure.error;
      if (emitFailed.failure) throw emitFailed.failure.error;
      while (
        planned.next !== null &&
        !planned.next.done &&
        active < options.concurrency &&
        inflight.length < MAX_WINDOW
      ) {
        const batch = planned.next.value;
        const region = batch.room > 0 ? ring.tryAcquire(batch.room) : null;
        if (batch.room > 0 && region === null) break;
        planned.next = null;
        plan();
        active++;
        const settled = processBatch(batch, region, ring, deps, options).then(
          (items): Settled => ({ ok: true, items }),
          (error: unknown): Settled => ({ ok: false, error }),
        );
        const entry: InFlight = { region, settled, result: null };
        // Registered before anyone awaits `settled`, so it runs first: a woken loop sees the result.
        void settled.then((result) => {
          active--;
          entry.result = result;
        });
        inflight.push(entry);
      }
      const head = inflight[0];
      if (head === undefined && planned.next?.done) break;
      if (head === undefined || head.result === null) {
        // Wake on whichever comes first: a batch finishing (its slot can start the next one), the
        // next batch planned, or an emit ending (its region may let a batch start).
        await Promise.race([
          ...inflight.filter((b) => b.result === null).map((b) => b.settled),
          ...(planned.planning ? [planned.planning] : []),
          ...emits,
          aborted,
        ]);
        continue;
      }
      inflight.shift();
      const settled = head.result;
      if (!settled.ok) throw settled.error;
      done += settled.items.length;
      const filesDone = done;
      const step = emitting.then(() => emit(settled.items, filesDone));
      // Regions go back in the order they were taken, once nothing reads them: emits end in order.
      const released = step.then(
        () => {
          if (head.region !== null) ring.releaseOldest();
        },
        (error: unknown) => {
          emitFailed.failure ??= { error };
        },
      );
      emits.add(released);
      void released.then(() => emits.delete(released));
      emitting = step;
    }
    await emitting;
  } finally {
    options.signal?.removeEventListener('abort', wake);
    // Let the batches already started and the emits finish before the ring is reused, so no read
    // or writer outlives the scan.
    await Promise.all(inflight.map((batch) => batch.settled));
    await Promise.allSettled([emitting]);
    returnRing(ring);
  }
}

/** Batches started but not yet emitted, at most: finished ones wait for a slow one ahead of them. */
const MAX_WINDOW = 32;
