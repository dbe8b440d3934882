// The engine's file-system work off the event loop, with blocking calls on threads of its own
// (file-thread.ts, walk-thread.ts). Blocking calls cost a fraction of the async ones (no promise,
// FileHandle or libuv round trip per call: 8 900 reads took 0.12 s instead of 0.9 s), and the
// event loop that serves HTTP and renews queue locks never waits on a disk. (Artifacts are written
// from the event loop in 1 MiB async writes: a few hundred a scan, where reads are thousands.)
//
// Reads (a batch takes about a millisecond) and a preview's token estimates go to two long-lived
// threads with a lean entry: a kept thread costs about 10 MB. A walk of a big tree gets a thread
// that ends with it: it takes a second and leaves tens of megabytes of garbage that a kept thread
// would hold on to (50 000 files: 74 MB RSS). A small walk's thread, with little garbage, waits
// for the next walk. A long-lived process can have the next walk's thread started while it is
// idle (prepareWalk): starting one took ~0.1 s at the head of every scan, while nothing else
// could run. Threads keep the process alive only while they work.
import { threadEntry, WorkerThread } from '../threads/worker-thread.js';
import type { SkippedPath, WalkedFile } from '../types.js';
import { WalkTimeoutError } from '../walk/walk-tree.js';
import type { WalkInput, WalkSink } from '../walk/walk-tree.js';
import { hashOnThisThread } from './appended-file-hash.js';
import { hashOutput } from '../artifacts/spliced-artifact.js';
import type { AppendedFileHash } from './appended-file-hash.js';
import type { IoRequest } from './io-protocol.js';
import type { ReadOutcome, ReadRequest } from './read-file-bytes.js';
import type { SecretScan } from '../secrets/secret-scan.js';
import type { CodeLanguage, CodeTransform, TransformOutcome } from '../compress/code-transform.js';

const FILE_ENTRY = threadEntry(import.meta.url, 'file-thread');
const WALK_ENTRY = threadEntry(import.meta.url, 'walk-thread');
/** A thread's label in the error of a request whose thread exited under it. */
const LABEL = 'An io thread';

/**
 * Walks of at most this many paths (kept and skipped) leave their thread for the next walk: a few
 * megabytes of garbage at most, and small scans back to back no longer wait 10-50 ms each for a
 * thread to start.
 */
export const KEEP_WALK_THREAD_UP_TO = 2_000;

/** Two lean threads serve reads and estimates alike, each request going to the less busy one. */
export const FILE_THREADS = 2;

/** The io threads of one engine (engine.ts): started as they are first needed, all ended by close(). */
export class IoThreads {
  readonly #files = new Set<WorkerThread>();
  readonly #walks = new Set<WorkerThread>();
  /** The next walk's thread, started ahead by prepareWalk or left by a small walk. */
  #spareWalk: WorkerThread | null = null;
  #closed = false;
  #hashes = 0;

  constructor(readonly fileThreads: number = FILE_THREADS) {}

  /**
   * Starts every file thread now. A long-lived process calls it while idle: otherwise the second
   * starts the first time a batch finds the first busy, i.e. in the middle of the first big scan,
   * whose counting it then slows with its start-up (~0.1 CPU-seconds).
   */
  prepareFiles(): void {
    while (!this.#closed && this.#files.size < this.fileThreads) this.#addFileThread();
  }

  /**
   * Starts the next walk's thread now, unless one is already waiting, so that walk does not wait for
   * it. For a long-lived process with time to spare (a worker between scans); an idle thread holds
   * a few megabytes.
   */
  prepareWalk(): void {
    if (!this.#closed) this.#spareWalk ??= this.#spawnWalk();
  }

  /**
   * `walkTreeInto` on a thread of its own: chunks of files reach `sink` as the thread finds them. The
   * thread ends with the walk, unless the walk was small and no other thread waits for the next one.
   * A filter function cannot cross threads: use `docsOnly`.
   *
   * A walk that runs past `limits.walkTimeoutMs`, or whose `signal` aborts, ends its thread at once
   * (whatever it was computing) and rejects with WalkTimeoutError or the signal's reason.
   */
  walk = (input: WalkInput, sink: WalkSink, signal?: AbortSignal): Promise<SkippedPath[]> => {
    if (input.acceptFile !== undefined)
      return Promise.reject(new TypeError('a walk on a thread takes no acceptFile function; set docsOnly instead'));
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    if (this.#closed) return Promise.reject(new Error('the engine is closed'));
    const thread = this.#spareWalk ?? this.#spawnWalk();
    this.#spareWalk = null;
    let paths = 0;
    // The deadline and the caller's signal stop the walk alike: the thread is ended at once.
    const stop = new AbortController();
    const onAbort = (): void => stop.abort(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(
      () => stop.abort(new WalkTimeoutError(input.limits.walkTimeoutMs)),
      input.limits.walkTimeoutMs,
    );
    const request: IoRequest = { kind: 'walk', input };
    return thread
      .request<SkippedPath[], WalkedFile[]>(request, {
        signal: stop.signal,
        onPartial: (files) => {
          paths += files.length;
          sink(files);
        },
      })
      .then(
        (skipped) => {
          if (paths + skipped.length <= KEEP_WALK_THREAD_UP_TO && this.#spareWalk === null && !this.#closed)
            this.#spareWalk = thread;
          else void thread.terminate();
          return skipped;
        },
        (error: unknown) => {
          void thread.terminate();
          throw error;
        },
      )
      .finally(() => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      });
  };

  /**
   * Token estimates of a batch of contents on a file thread: a preview's one heavy computation (about
   * 160 MB/s) runs on both cores instead of the caller's. Contents in shared memory (the read ring)
   * cross without a copy.
   */
  estimate = (contents: Uint8Array[]): Promise<number[]> => this.#ask<number[]>({ kind: 'estimate', contents });

  /**
   * Secret findings of a batch of UTF-8 contents on a file thread (secretlint's rules, loaded there
   * on the first batch), with each content's redacted text when it has any. `names` are their
   * paths: a few rules look at a file's name.
   */
  detectSecrets = (contents: Uint8Array[], names: string[]): Promise<SecretScan[]> =>
    this.#ask<SecretScan[]>({ kind: 'secrets', contents, names });

  /**
   * Compressed code or comment removal of a batch of UTF-8 contents on a file thread (tree-sitter,
   * loaded there on the first batch, each grammar on its first file): parsing is CPU work that must
   * not hold the event loop, and its per-file time cap (a parse cancelled from its own progress
   * callback) holds on any thread.
   */
  transformCode = (
    contents: Uint8Array[],
    languages: CodeLanguage[],
    transform: CodeTransform,
  ): Promise<TransformOutcome[]> => this.#ask<TransformOutcome[]>({ kind: 'compress', contents, languages, transform });

  /** A batch of reads on a file thread, into the shared memory of each request's `into`. */
  readFiles = (requests: readonly ReadRequest[], maxBytes: number): Promise<ReadOutcome[]> =>
    this.#ask<ReadOutcome[]>({ kind: 'read', requests: [...requests], maxBytes });

  /**
   * The SHA-256 of the file at `path` as it is written, on a file thread that reads back each
   * append (appended-file-hash.ts). Files hashed at once take the file threads in turn; all of one
   * file's requests go to one thread, which answers them in order.
   */
  hashFile = (path: string): AppendedFileHash => {
    this.prepareFiles();
    const threads = [...this.#files];
    // None only once the engine is closed, which #ask refuses.
    const thread = threads[this.#hashes % threads.length];
    const id = ++this.#hashes;
    let started = false;
    let failure: Error | null = null;
    const ask = <T>(request: Exclude<IoRequest, { kind: 'walk' }>): Promise<T> => this.#ask<T>(request, thread);
    return {
      appended: (_data, length) => {
        started = true;
        ask({ kind: 'hash', id, path, length }).catch((error: unknown) => {
          failure ??= error instanceof Error ? error : new Error(String(error));
        });
      },
      digest: async () => {
        if (!started) return hashOnThisThread().digest();
        const hex = await ask<string | null>({ kind: 'hash-end', id });
        if (failure !== null || hex === null) throw failure ?? new Error(`the SHA-256 of ${path} was lost`);
        return hex;
      },
      drop: () =>
        ask({ kind: 'hash-end', id }).then(
          () => undefined,
          () => undefined,
        ),
    };
  };

  /**
   * The SHA-256 of a finished output (a spliced one: spliced-artifact.ts) on an idle file thread, or
   * on the caller's when every file thread is at work (three outputs, two threads): the caller is
   * waiting for the digests anyway, and a third output queued behind another took as long again.
   */
  hashOutput = (path: string): Promise<string> => {
    this.prepareFiles();
    const idle = [...this.#files].find((thread) => thread.busy === 0);
    return idle === undefined ? hashOutput(path) : this.#ask<string>({ kind: 'hash-output', path }, idle);
  };

  /** Ends every thread; requests in flight reject, later ones are refused. */
  async close(): Promise<void> {
    this.#closed = true;
    const threads = [...this.#files, ...this.#walks];
    this.#files.clear();
    this.#walks.clear();
    this.#spareWalk = null;
    await Promise.all(threads.map((thread) => thread.terminate()));
  }

  /** `request` on `thread`, by default the least busy file thread. */
  #ask<T>(request: Exclude<IoRequest, { kind: 'walk' }>, thread?: WorkerThread): Promise<T> {
    if (this.#closed) return Promise.reject(new Error('the engine is closed'));
    return (thread ?? this.#pickFileThread()).request<T>(request);
  }

  /** The least busy file thread; a new one while all are busy and the set may grow. */
  #pickFileThread(): WorkerThread {
    let best: WorkerThread | null = null;
    for (const thread of this.#files) if (best === null || thread.busy < best.busy) best = thread;
    if (best !== null && (best.busy === 0 || this.#files.size >= this.fileThreads)) return best;
    return this.#addFileThread();
  }

  #addFileThread(): WorkerThread {
    const thread = new WorkerThread({
      entry: FILE_ENTRY,
      label: LABEL,
      youngGenerationMb: 4,
      onExit: (gone) => this.#files.delete(gone),
    });
    this.#files.add(thread);
    return thread;
  }

  #spawnWalk(): WorkerThread {
    const thread = new WorkerThread({
      entry: WALK_ENTRY,
      label: LABEL,
      youngGenerationMb: 4,
      onExit: (gone) => {
        this.#walks.delete(gone);
        if (this.#spareWalk === gone) this.#spareWalk = null;
      },
    });
    this.#walks.add(thread);
    return thread;
  }
}
