/**
 * Latencies of GETs of `url` taken while a scan runs. Probes go in windows of ten and a window
 * counts only if `stillRunning()` holds after it, so every counted probe overlapped the scan,
 * however fast the scan happens to be. Stops after `maxProbes` counted probes or when the scan ends.
 */
export async function probeWhileRunning(
  url: string,
  stillRunning: () => Promise<boolean>,
  maxProbes = 400,
): Promise<number[]> {
  const latencies: number[] = [];
  while (latencies.length < maxProbes) {
    const window: number[] = [];
    for (let i = 0; i < 10; i++) {
      const started = performance.now();
      const response = await fetch(url);
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`GET ${url} answered ${response.status}`);
      window.push(performance.now() - started);
    }
    if (!(await stillRunning())) break;
    latencies.push(...window);
  }
  return latencies;
}

/** The 99th percentile (nearest rank) of some latencies. */
export function p99(latencies: readonly number[]): number {
  const sorted = [...latencies].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(sorted.length * 0.99) - 1)] ?? Number.NaN;
}
