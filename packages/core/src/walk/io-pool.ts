// Bounds the file-system calls in flight. Waiting calls are started last-in first-out: the walk
// queues a folder's children after its own work, so LIFO runs roughly in the depth-first order
// the output is assembled in, and little work is wasted when the file limit stops the walk.

export class IoPool {
  readonly #limit: number;
  #active = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(limit: number) {
    this.#limit = limit;
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.#active < this.#limit) this.#active += 1;
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
    try {
      return await task();
    } finally {
      // Hand the slot straight to a waiting call, or give it back.
      const next = this.#waiting.pop();
      if (next) next();
      else this.#active -= 1;
    }
  }
}
