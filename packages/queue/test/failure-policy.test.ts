import { connect } from 'node:net';
import { ScanError } from '@reposcan/contracts';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { isFinalError, isTransientError } from '../src/failure-policy.js';
import { REDIS_URL, freePort } from './support/redis.js';

/** The error a real failing call gives, so the test sees what production sees. */
async function caught(call: () => unknown): Promise<unknown> {
  try {
    await call();
  } catch (error) {
    return error;
  }
  throw new Error('the call did not fail');
}

function overflowStack(depth: number): number {
  return depth === -1 ? 0 : overflowStack(depth + 1) + 1;
}

const connectionRefused = async (): Promise<unknown> => {
  const port = await freePort();
  return caught(
    () =>
      new Promise((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => resolve(socket.end()));
        socket.once('error', reject);
      }),
  );
};

describe('what a failed attempt means for its job', () => {
  it('a bug fails at once: TypeError, a stack overflow (RangeError), a plain Error, a thrown non-error', async () => {
    const bugs = [
      await caught(() => (undefined as unknown as { count(): number }).count()),
      await caught(() => overflowStack(0)),
      await caught(() => JSON.parse('{"state": "half-written')),
      new Error('something unexpected'),
      'a string',
      null,
      undefined,
    ];
    expect((bugs[1] as Error).message).toBe('Maximum call stack size exceeded');
    for (const bug of bugs) {
      expect(isTransientError(bug), String(bug)).toBe(false);
      expect(isFinalError(bug), String(bug)).toBe(true);
    }
  });

  it('the network and a busy system are retried: ECONNREFUSED, ECONNRESET, EAGAIN, EMFILE, also as a cause', async () => {
    const refused = await connectionRefused();
    expect((refused as { code?: string }).code).toBe('ECONNREFUSED');
    const transient = [
      refused,
      Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET', errno: -104, syscall: 'read' }),
      Object.assign(new Error('spawn git EAGAIN'), { code: 'EAGAIN', syscall: 'spawn git' }),
      Object.assign(new Error('EMFILE: too many open files'), { code: 'EMFILE' }),
      new Error('Token worker exited', { cause: refused }),
    ];
    for (const error of transient) {
      expect(isTransientError(error), String(error)).toBe(true);
      expect(isFinalError(error), String(error)).toBe(false);
    }
  });

  it('Redis that is away or loading is retried; a command Redis refuses is a bug', async () => {
    const port = await freePort();
    // Given up on (no reconnect), and still reconnecting when the command's retries ran out.
    const closed = new Redis(`redis://127.0.0.1:${port}`, {
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      lazyConnect: true,
    });
    const retrying = new Redis(`redis://127.0.0.1:${port}`, { maxRetriesPerRequest: 0 });
    for (const client of [closed, retrying]) client.on('error', () => {});
    const unreachable = [
      await caught(async () => {
        await closed.connect().catch(() => undefined);
        await closed.get('key');
      }),
      await caught(() => retrying.get('key')),
    ];
    for (const client of [closed, retrying]) client.disconnect();
    expect(unreachable.map((e) => (e as Error).name)).toEqual(['Error', 'MaxRetriesPerRequestError']);
    for (const error of unreachable) expect(isTransientError(error), String(error)).toBe(true);

    const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    let refused: unknown;
    try {
      refused = await caught(() => redis.call('NO-SUCH-COMMAND'));
    } finally {
      redis.disconnect();
    }
    expect((refused as Error).name).toBe('ReplyError');
    expect(isTransientError(refused)).toBe(false);
    expect(isFinalError(refused)).toBe(true);
    // Replies of a Redis that is starting or failing over, in the class a real reply comes in.
    const Reply = (refused as Error).constructor as new (message: string) => Error;
    expect(isTransientError(new Reply('LOADING Redis is loading the dataset in memory'))).toBe(true);
    expect(isTransientError(new Reply("READONLY You can't write against a read only replica."))).toBe(true);
  });

  it('a ScanError says so itself, also after crossing a thread (a plain object of its shape)', () => {
    expect(isFinalError(new ScanError('BRANCH_NOT_FOUND', 'no such branch'))).toBe(true);
    expect(isFinalError(new ScanError('CLONE_FAILED', 'remote hung up', { retryable: true }))).toBe(false);
    expect(isFinalError({ name: 'ScanError', code: 'CLONE_FAILED', message: 'x', options: { retryable: true } })).toBe(
      false,
    );
    // Its own flag wins over a transient cause: the code that threw it knew better.
    expect(
      isFinalError(
        new ScanError('REPO_NOT_FOUND', 'gone', { cause: Object.assign(new Error('reset'), { code: 'ECONNRESET' }) }),
      ),
    ).toBe(true);
  });
});
