// The one thread primitive of the repo: a worker thread that answers numbered requests (with
// parts along the way, for a walk's chunks), reports ready once its entry has loaded, cancels a
// request whose caller gives up, and keeps the process alive only while it has work. Every pool
// (io-threads.ts, token-pool.ts, the API's inspect service) is a policy over these: how many, when
// started, when retired. Errors cross through one codec (error-codec.ts).
//
// Hand-written rather than piscina (5.3): a walk streams its files back in chunks before its
// answer, the tokenizer threads share tables built once by the caller, and an aborted request
// gets a grace period before its thread is ended; piscina has none of these.
import { Worker } from 'node:worker_threads';
import { decodeError } from './error-codec.js';
import type { ThreadReply, ThreadRequest } from './thread-protocol.js';

// From TypeScript sources (tests, tsx) a thread needs the tsx loader and the `source` export
// condition; Node 20 applies no --import loader to a worker's own entry, so thread.dev.mjs
// registers it and loads the entry. From dist the entry is plain JavaScript.
const DEV_ENTRY = new URL('./thread.dev.mjs', import.meta.url);

/** The entry `name` beside the module at `moduleUrl`: its .ts source when that module runs from source, else the built .js. */
export function threadEntry(moduleUrl: string, name: string): URL {
  return new URL(`./${name}${moduleUrl.endsWith('.ts') ? '.ts' : '.js'}`, moduleUrl);
}

export interface WorkerThreadOptions {
  /** From threadEntry. */
  entry: URL;
  /** Names the thread in the error its requests reject with if it exits: "<label> exited with code 1". */
  label: string;
  /** Handed to the entry (threadData()); shared memory crosses without a copy. */
  data?: unknown;
  /** V8's young generation cap: a thread that makes only short-lived garbage needs a few MB, not V8's tens. */
  youngGenerationMb?: number;
  /** Hold the process open while the entry loads (a pool that was asked to warm); otherwise only while requests run. */
  holdWhileStarting?: boolean;
  /** Called once no request runs on the thread any more (including one its caller abandoned). */
  onIdle?: (thread: WorkerThread) => void;
  /** Called once the thread has exited, after its requests were rejected. */
  onExit?: (thread: WorkerThread, code: number) => void;
}

export interface RequestOptions<P> {
  onPartial?: (partial: P) => void;
  /**
   * Once it aborts, the request rejects with its reason at once, the thread is told to cancel it
   * (serveThread's signal) and, still running it after `abortGraceMs`, is ended.
   */
  signal?: AbortSignal;
  /** 0 (the default): the thread is ended at once. */
  abortGraceMs?: number;
}

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
  onPartial?: ((partial: never) => void) | undefined;
}

export class WorkerThread {
  /** Resolves once the entry has loaded; rejects if the thread exits first. */
  readonly ready: Promise<void>;
  readonly #worker: Worker;
  readonly #options: WorkerThreadOptions;
  readonly #pending = new Map<number, Pending>();
  /** Requests whose caller gave up while the thread still runs them. */
  readonly #abandoned = new Set<number>();
  #nextId = 1;
  #isReady = false;
  #exited = false;
  #failure: Error | null = null;

  constructor(options: WorkerThreadOptions) {
    this.#options = options;
    const fromSource = options.entry.pathname.endsWith('.ts');
    const workerData = { data: options.data, entry: fromSource ? options.entry.href : undefined };
    const resourceLimits =
      options.youngGenerationMb === undefined ? undefined : { maxYoungGenerationSizeMb: options.youngGenerationMb };
    this.#worker = fromSource
      ? new Worker(DEV_ENTRY, {
          execArgv: ['--conditions=source'],
          workerData,
          ...(resourceLimits ? { resourceLimits } : {}),
        })
      : new Worker(options.entry, { workerData, ...(resourceLimits ? { resourceLimits } : {}) });
    let markReady!: () => void;
    let failReady!: (error: Error) => void;
    this.ready = new Promise<void>((resolve, reject) => {
      markReady = resolve;
      failReady = reject;
    });
    // Nobody may wait for it; the failure also reaches every request.
    this.ready.catch(() => undefined);
    this.#worker.on('message', (reply: ThreadReply) => {
      if ('ready' in reply) {
        this.#isReady = true;
        markReady();
        this.#updateRef();
      } else if ('partial' in reply) {
        (this.#pending.get(reply.id)?.onPartial as ((partial: unknown) => void) | undefined)?.(reply.partial);
      } else this.#answer(reply);
    });
    this.#worker.on('error', (error) => {
      this.#failure = error;
    });
    this.#worker.on('exit', (code) => {
      this.#exited = true;
      const error = new Error(`${options.label} exited with code ${code}`, { cause: this.#failure ?? undefined });
      failReady(error);
      const pending = [...this.#pending.values()];
      this.#pending.clear();
      this.#abandoned.clear();
      for (const request of pending) request.reject(error);
      options.onExit?.(this, code);
    });
    this.#updateRef();
  }

  get isReady(): boolean {
    return this.#isReady;
  }

  get exited(): boolean {
    return this.#exited;
  }

  /** Requests the thread is running or has queued, abandoned ones included. */
  get busy(): number {
    return this.#pending.size + this.#abandoned.size;
  }

  /** Sends `body` to the entry's answer; resolves with its value, rejects with its error decoded. */
  request<T, P = never>(body: unknown, options: RequestOptions<P> = {}): Promise<T> {
    const { signal, onPartial, abortGraceMs = 0 } = options;
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    if (this.#exited) return Promise.reject(new Error(`${this.#options.label} has exited`));
    const id = this.#nextId++;
    return new Promise<T>((resolve, reject) => {
      const onAbort = (): void => {
        if (!this.#pending.delete(id)) return;
        this.#abandoned.add(id);
        reject(signal?.reason as Error);
        if (abortGraceMs <= 0) {
          void this.terminate();
          return;
        }
        this.#worker.postMessage({ cancel: id } satisfies ThreadRequest);
        setTimeout(() => {
          if (this.#abandoned.has(id)) void this.terminate();
        }, abortGraceMs);
      };
      const done = (): void => signal?.removeEventListener('abort', onAbort);
      this.#pending.set(id, {
        resolve: (value) => {
          done();
          resolve(value as T);
        },
        reject: (error) => {
          done();
          reject(error);
        },
        onPartial,
      });
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#updateRef();
      this.#worker.postMessage({ id, body } satisfies ThreadRequest);
    });
  }

  /** Ends the thread whatever it runs; its requests reject. */
  async terminate(): Promise<void> {
    await this.#worker.terminate();
  }

  #answer(reply: Extract<ThreadReply, { ok: boolean }>): void {
    const pending = this.#pending.get(reply.id);
    this.#pending.delete(reply.id);
    this.#abandoned.delete(reply.id);
    this.#updateRef();
    if (pending !== undefined) {
      if (reply.ok) pending.resolve(reply.value);
      else pending.reject(decodeError(reply.error));
    }
    if (this.busy === 0) this.#options.onIdle?.(this);
  }

  /** A thread holds the process open only while it works (or loads, when asked to). */
  #updateRef(): void {
    if (this.busy > 0 || (!this.#isReady && this.#options.holdWhileStarting === true)) this.#worker.ref();
    else this.#worker.unref();
  }
}
