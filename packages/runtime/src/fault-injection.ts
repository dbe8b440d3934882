import { writeSync } from 'node:fs';
import type { FaultPoint, FaultRule } from '@reposcan/config';

/**
 * The test seam behind FAULT_INJECTION: crash, hang or fail like a full disk at a point of a
 * scan, so the reliability tests kill a worker (or the API) in a known phase instead of racing
 * a timer. With no rules, as in production, `hit` does nothing.
 */
export class FaultInjector {
  constructor(private readonly rules: readonly FaultRule[] = []) {}

  /** Applies the rules for `point` that match this scan (`subject`: its repository path or upload name). */
  hit(point: FaultPoint, subject: string): void {
    for (const rule of this.rules) {
      if (rule.point !== point || (rule.match !== undefined && !subject.includes(rule.match))) continue;
      // Synchronous: the process may be about to die, or to stop its event loop.
      writeSync(2, `fault injection: ${rule.action} at ${point} (pid ${process.pid})\n`);
      if (rule.action === 'crash') process.kill(process.pid, 'SIGKILL');
      if (rule.action === 'enospc')
        throw Object.assign(new Error('ENOSPC: no space left on device (fault injection)'), { code: 'ENOSPC' });
      // Stops the whole event loop (lock renewal included) without spinning a core.
      if (rule.action === 'block') Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, rule.ms ?? Infinity);
    }
  }
}
