import type { WalkedFile } from '../types.js';

/**
 * Walked files on their way from a walk that is still going to the scan that reads them: the
 * walk pushes chunks in output order, the scan takes whatever has arrived or waits for more.
 */
export class FileFeed {
  #buffered: WalkedFile[] = [];
  #ended = false;
  #failure: { error: unknown } | null = null;
  #wake: (() => void) | null = null;

  /** A feed that already holds every file. */
  static of(files: WalkedFile[]): FileFeed {
    const feed = new FileFeed();
    feed.push(files);
    feed.end();
    return feed;
  }

  push(files: WalkedFile[]): void {
    if (this.#ended) return;
    for (const file of files) this.#buffered.push(file);
    this.#notify();
  }

  end(): void {
    this.#ended = true;
    this.#notify();
  }

  /** The reader gave up: what is buffered and whatever comes later is dropped. */
  close(): void {
    this.#buffered = [];
    this.end();
  }

  fail(error: unknown): void {
    this.#failure ??= { error };
    this.#ended = true;
    this.#notify();
  }

  /** Every file that has arrived and was not taken yet; empty when none has. */
  takeArrived(): WalkedFile[] {
    if (this.#failure) throw this.#failure.error;
    const files = this.#buffered;
    this.#buffered = [];
    return files;
  }

  /** Waits until more files arrive or the feed ends: true if there may be more to take. */
  async more(): Promise<boolean> {
    while (this.#buffered.length === 0 && !this.#ended) await new Promise<void>((resolve) => (this.#wake = resolve));
    if (this.#failure) throw this.#failure.error;
    return this.#buffered.length > 0;
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = null;
    wake?.();
  }
}
