/** A blocking call behind an async signature: its result resolves, its throw becomes a rejection. */
export function asPromise<T>(run: () => T): Promise<T> {
  try {
    return Promise.resolve(run());
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
}
