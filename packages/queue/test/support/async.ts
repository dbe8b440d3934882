export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls until check() is true (or resolves true); fails with `what` after timeoutMs. */
export async function waitFor(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(15);
  }
}

export interface Gate {
  promise: Promise<void>;
  open: () => void;
}

export function gate(): Gate {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/** Wraps a synchronous test callback as the async callback the transports expect. */
export function resolving<A extends unknown[]>(fn: (...args: A) => unknown): (...args: A) => Promise<void> {
  return (...args) => {
    fn(...args);
    return Promise.resolve();
  };
}
