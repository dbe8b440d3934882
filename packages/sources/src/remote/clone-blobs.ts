import { withoutGitCredential } from './git-credential.js';
import type { GitEnv } from './git-env.js';
import { startGitBatch } from './git-process.js';
import type { GitBatchProcess } from './git-process.js';

/** A regular file of a clone whose blob is in its object store, not written out. */
export interface StoredBlob {
  blob: string;
  size: number;
}

/** What reading a stored file gives: @reposcan/core's ReadOutcome, spelled out. */
export type BlobReadOutcome = { ok: true; bytes: Uint8Array } | { ok: false; reason: 'too_large' | 'unreadable' };

interface Awaited {
  size: number;
  into: Uint8Array | undefined;
  resolve: (outcome: BlobReadOutcome) => void;
  reject: (error: unknown) => void;
}

/**
 * The files of a clone that stay in its object store, read with one `git cat-file --batch` as
 * the scan asks for them (an AbsentFileReader of @reposcan/core): no file is written out and read
 * back, and none is left to delete. Requests are answered in order; any number may be in flight.
 */
export class CloneBlobs {
  private git: Promise<GitBatchProcess> | null = null;
  private readonly awaited: Awaited[] = [];
  /** The header of the next answer, while it arrives in pieces. */
  private header: Uint8Array[] = [];
  /** The answer being read: where its bytes go and how many are still to come (its final newline included). */
  private current: { entry: Awaited; bytes: Uint8Array; filled: number } | null = null;
  private failure: Error | null = null;

  private readonly gitEnv: GitEnv;

  constructor(
    /** Root-relative path → its blob. */
    readonly files: ReadonlyMap<string, StoredBlob>,
    private readonly repoDir: string,
    gitEnv: GitEnv,
    private readonly signal: AbortSignal,
  ) {
    // It reads the clone's own objects only: no transport is allowed (nothing is fetched lazily),
    // and the request's credential, which the clone needed, is not kept.
    const local = withoutGitCredential(gitEnv);
    this.gitEnv = { ...local, env: { ...local.env, GIT_ALLOW_PROTOCOL: '' } };
  }

  /** The walk's view of them: path → size. */
  sizes(): Map<string, number> {
    return new Map([...this.files].map(([path, { size }]) => [path, size]));
  }

  has(path: string): boolean {
    return this.files.has(path);
  }

  read(files: readonly { path: string; into?: Uint8Array }[], maxBytes: number): Promise<BlobReadOutcome[]> {
    return Promise.all(
      files.map(async ({ path, into }): Promise<BlobReadOutcome> => {
        const stored = this.files.get(path);
        if (stored === undefined) return { ok: false, reason: 'unreadable' };
        if (stored.size > maxBytes) return { ok: false, reason: 'too_large' };
        return this.ask(stored, into);
      }),
    );
  }

  /** Ends git once it has answered everything asked. */
  async close(): Promise<void> {
    if (this.git === null) return;
    const git = await this.git;
    git.end();
    await git.exited.catch((error: unknown) => {
      if (this.awaited.length > 0 || this.current !== null) throw error;
    });
  }

  private async ask(stored: StoredBlob, into: Uint8Array | undefined): Promise<BlobReadOutcome> {
    if (this.failure !== null) throw this.failure;
    // git is being killed: nothing is asked of it after its scan ended.
    this.signal.throwIfAborted();
    const answer = new Promise<BlobReadOutcome>((resolve, reject) =>
      this.awaited.push({ size: stored.size, into, resolve, reject }),
    );
    // Every ask waits on the same start, so the requests are written in the order they were awaited.
    const git = await (this.git ??= this.start());
    git.stdin.write(`${stored.blob}\n`);
    return answer;
  }

  private async start(): Promise<GitBatchProcess> {
    let git: GitBatchProcess | null = null;
    const started = startGitBatch(
      ['cat-file', '--batch'],
      { gitEnv: this.gitEnv, cwd: this.repoDir, signal: this.signal },
      (chunk) => {
        try {
          this.take(chunk);
        } catch (error) {
          this.fail(error);
          git?.kill();
        }
      },
    );
    started.catch((error: unknown) => this.fail(error));
    git = await started;
    git.exited.then(
      () => {
        if (this.awaited.length > 0 || this.current !== null)
          this.fail(new Error('git cat-file ended before answering'));
      },
      (error: unknown) => this.fail(error),
    );
    return git;
  }

  private fail(error: unknown): void {
    this.failure ??= error instanceof Error ? error : new Error(String(error));
    const pending = [...(this.current ? [this.current.entry] : []), ...this.awaited.splice(0)];
    this.current = null;
    for (const entry of pending) entry.reject(this.failure);
  }

  /** `<blob> blob <size>\n<bytes>\n` per request, or `<blob> missing\n`. */
  private take(chunk: Uint8Array): void {
    let at = 0;
    while (at < chunk.length) {
      if (this.current === null) {
        const newline = chunk.indexOf(0x0a, at);
        if (newline < 0) {
          // A copy: the chunk's memory is reused for the next read.
          this.header.push(Buffer.from(chunk.subarray(at)));
          return;
        }
        this.header.push(chunk.subarray(at, newline));
        at = newline + 1;
        const line = Buffer.concat(this.header).toString('latin1');
        this.header = [];
        const entry = this.awaited.shift();
        if (entry === undefined) throw new Error(`git cat-file answered what was not asked: ${line}`);
        const match = /^[0-9a-f]+ blob (\d+)$/.exec(line);
        if (match === null) {
          entry.resolve({ ok: false, reason: 'unreadable' });
          continue;
        }
        const size = Number(match[1]);
        if (size !== entry.size) throw new Error(`git cat-file gave ${size} bytes where the tree said ${entry.size}`);
        const bytes =
          entry.into !== undefined && entry.into.length >= size
            ? entry.into.subarray(0, size)
            : new Uint8Array(new SharedArrayBuffer(size));
        this.current = { entry, bytes, filled: 0 };
      }
      const current = this.current;
      const wanted = current.bytes.length + 1 - current.filled;
      const take = Math.min(wanted, chunk.length - at);
      const into = Math.min(take, current.bytes.length - current.filled);
      if (into > 0) current.bytes.set(chunk.subarray(at, at + into), current.filled);
      current.filled += take;
      at += take;
      if (current.filled === current.bytes.length + 1) {
        this.current = null;
        current.entry.resolve({ ok: true, bytes: current.bytes });
      }
    }
  }
}
