/** A signal that aborts with `reason()` after `ms`, merged with the caller's own signal. */
export function withDeadline(
  ms: number,
  reason: () => Error,
  callerSignal?: AbortSignal,
): { signal: AbortSignal; clear: () => void } {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(reason()), ms);
  const signal = callerSignal ? AbortSignal.any([controller.signal, callerSignal]) : controller.signal;
  return { signal, clear: () => clearTimeout(timer) };
}
