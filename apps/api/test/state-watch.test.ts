import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createLocalStateSignals } from '@reposcan/queue';
import { StateWatch } from '../src/services/state-watch.js';

// The poll interval is an hour in these tests: whatever ends a wait here is the signal, an
// abort or a close, never the timer.
const HOUR = 3_600_000;

/** 'woken' if `wait` settles within a second, else 'still waiting'. */
async function outcome(wait: Promise<void>): Promise<'woken' | 'still waiting'> {
  let timer: NodeJS.Timeout | undefined;
  const result = await Promise.race([wait.then(() => 'woken' as const), new Promise<'still waiting'>((resolve) => (timer = setTimeout(resolve, 1_000, 'still waiting')))]);
  clearTimeout(timer);
  return result;
}

describe('StateWatch', () => {
  it('wakes a waiter when its scan is announced, and only its scan', async () => {
    const signals = createLocalStateSignals();
    const scan = randomUUID();
    const watch = new StateWatch(signals, scan);
    const waiting = watch.next(HOUR);
    signals.announce(randomUUID());
    expect(await outcome(waiting)).toBe('still waiting');
    signals.announce(scan);
    expect(await outcome(waiting)).toBe('woken');
    watch.close();
  });

  it('does not lose a change announced between two waits: the next wait returns at once', async () => {
    const signals = createLocalStateSignals();
    const scan = randomUUID();
    const watch = new StateWatch(signals, scan);
    signals.announce(scan); // as if the state changed while the caller was reading it
    expect(await outcome(watch.next(HOUR))).toBe('woken');
    // That change is used up: the wait after it waits again.
    expect(await outcome(watch.next(HOUR))).toBe('still waiting');
    watch.close();
  });

  it('ends a wait when its abort signal fires, and when the watch is closed', async () => {
    const signals = createLocalStateSignals();
    const scan = randomUUID();
    const aborting = new AbortController();
    const watch = new StateWatch(signals, scan);
    const waiting = watch.next(HOUR, aborting.signal);
    aborting.abort();
    expect(await outcome(waiting)).toBe('woken');
    const closing = watch.next(HOUR);
    watch.close();
    expect(await outcome(closing)).toBe('woken');
  });

  it('stops listening once closed', () => {
    const signals = createLocalStateSignals();
    const scan = randomUUID();
    let listening = 0;
    const counted = {
      ...signals,
      listen: (id: string, onChange: () => void) => {
        listening++;
        const stop = signals.listen(id, onChange);
        return () => {
          listening--;
          stop();
        };
      },
    };
    const watch = new StateWatch(counted, scan);
    expect(listening).toBe(1);
    watch.close();
    expect(listening).toBe(0);
  });

  it('without signals it is a plain poll: the wait ends after its interval', async () => {
    const watch = new StateWatch(undefined, randomUUID());
    expect(await outcome(watch.next(10))).toBe('woken');
    watch.close();
  });
});
