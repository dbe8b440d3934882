import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { createLocalStateSignals, createRedisStateSignals } from '../src/index.js';
import type { StateSignals } from '../src/index.js';
import { sleep, waitFor } from './support/async.js';
import { freePort, REDIS_URL, uniquePrefix } from './support/redis.js';

const opened: StateSignals[] = [];
const quiet = (): void => {};

afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close()));
});

function redisSignals(prefix: string, redisUrl = REDIS_URL): StateSignals {
  const signals = createRedisStateSignals({ redis: { kind: 'single', url: redisUrl }, prefix, report: quiet });
  opened.push(signals);
  return signals;
}

/** Announces until `heard` holds: a subscription is live a moment after it is asked for. */
async function announceUntil(signals: StateSignals, scanId: string, heard: () => boolean): Promise<void> {
  await waitFor(`an announcement of ${scanId}`, () => {
    signals.announce(scanId);
    return heard();
  });
}

describe('state signals within one process', () => {
  it('calls the listeners of the announced scan only, until they stop listening', () => {
    const signals = createLocalStateSignals();
    const [a, b] = [randomUUID(), randomUUID()];
    const heard: string[] = [];
    const stopA = signals.listen(a, () => heard.push('a1'));
    signals.listen(a, () => heard.push('a2'));
    signals.listen(b, () => heard.push('b'));
    signals.announce(a);
    expect(heard).toEqual(['a1', 'a2']);
    stopA();
    signals.announce(a);
    expect(heard).toEqual(['a1', 'a2', 'a2']);
  });
});

describe('state signals over Redis pub/sub', () => {
  it('carry an announcement from one process to the listeners of that scan in another', async () => {
    const prefix = uniquePrefix('signals');
    const api = redisSignals(prefix);
    const worker = redisSignals(prefix);
    const [scan, other] = [randomUUID(), randomUUID()];
    let heard = 0;
    let heardOther = 0;
    api.listen(scan, () => heard++);
    api.listen(other, () => heardOther++);
    await announceUntil(worker, scan, () => heard > 0);
    expect(heardOther).toBe(0);
  });

  it("deliver a new process's very first announcement", async () => {
    const prefix = uniquePrefix('signals');
    const api = redisSignals(prefix);
    const scan = randomUUID();
    let heard = 0;
    api.listen(scan, () => heard++);
    // Once the API is subscribed, a process that has only just started announces exactly once.
    const redis = new Redis(REDIS_URL);
    try {
      await waitFor('the subscription', async () => {
        const [, subscribers] = (await redis.pubsub('NUMSUB', `${prefix}:scans:state-changed`)) as [string, number];
        return subscribers > 0;
      });
    } finally {
      redis.disconnect();
    }
    const worker = redisSignals(prefix);
    // It connects while its process starts; the first state write comes after that.
    await sleep(200);
    worker.announce(scan);
    await waitFor('the first announcement', () => heard > 0, 2_000);
  });

  it('keep deployments on one Redis apart: another queue prefix hears nothing', async () => {
    const prefix = uniquePrefix('signals');
    const api = redisSignals(prefix);
    const stranger = redisSignals(uniquePrefix('signals'));
    const scan = randomUUID();
    let heard = 0;
    let strangerHeard = 0;
    api.listen(scan, () => heard++);
    stranger.listen(scan, () => strangerHeard++);
    stranger.startListening();
    await announceUntil(redisSignals(prefix), scan, () => heard > 0);
    await sleep(100);
    expect(strangerHeard).toBe(0);
  });

  it('never throw or hang when Redis is unreachable: announcing and listening carry on locally', async () => {
    const signals = redisSignals(uniquePrefix('signals'), `redis://127.0.0.1:${await freePort()}`);
    const scan = randomUUID();
    let heard = 0;
    const stop = signals.listen(scan, () => heard++);
    signals.announce(scan);
    expect(heard).toBe(1);
    stop();
    signals.announce(scan);
    expect(heard).toBe(1);
  });
});
