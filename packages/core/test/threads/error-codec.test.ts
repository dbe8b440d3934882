import { describe, expect, it } from 'vitest';
import { ScanError } from '@reposcan/contracts';
import { decodeError, encodeError } from '../../src/threads/error-codec.js';
import { ScanRootError } from '../../src/walk/scan-root.js';
import { WalkTimeoutError } from '../../src/walk/walk-tree.js';

/** What the caller gets back for an error thrown on a thread: encoded there, cloned across, decoded here. */
const cross = (error: unknown): Error => decodeError(structuredClone(encodeError(error)));

describe('the error codec', () => {
  it("rebuilds the repo's own error classes, so instanceof and code hold after a crossing", () => {
    const scan = cross(new ScanError('INSPECT_BUSY', 'All slots are busy.', { retryAfterSeconds: 1, retryable: true }));
    expect(scan).toBeInstanceOf(ScanError);
    expect(scan).toMatchObject({
      code: 'INSPECT_BUSY',
      message: 'All slots are busy.',
      retryable: true,
      options: { retryAfterSeconds: 1 },
    });

    const root = cross(new ScanRootError('SUBDIR_NOT_FOUND', 'no such folder'));
    expect(root).toBeInstanceOf(ScanRootError);
    expect(root).toMatchObject({ name: 'ScanRootError', code: 'SUBDIR_NOT_FOUND', message: 'no such folder' });

    const timeout = cross(new WalkTimeoutError(5000));
    expect(timeout).toBeInstanceOf(WalkTimeoutError);
    expect(timeout).toMatchObject({ code: 'WALK_TIMEOUT', message: 'listing the repository took longer than 5 s' });
  });

  it("keeps name, message, code and the thread's stack of any other error", () => {
    const thrown = Object.assign(new Error('no such file'), { code: 'ENOENT' });
    const other = cross(thrown);
    expect(other).toBeInstanceOf(Error);
    expect(other).toMatchObject({ name: 'Error', message: 'no such file', code: 'ENOENT' });
    expect(other.stack).toBe(thrown.stack);
    expect(cross(new TypeError('bad'))).toMatchObject({ name: 'TypeError', message: 'bad' });
  });

  it('does not make a ScanError of an unknown code, and turns a thrown non-Error into an Error', () => {
    const forged = cross(Object.assign(new Error('forged'), { name: 'ScanError', code: 'NOT_A_CODE' }));
    expect(forged).not.toBeInstanceOf(ScanError);
    expect(forged).toMatchObject({ name: 'ScanError', message: 'forged' });
    expect(cross('a string')).toMatchObject({ name: 'Error', message: 'a string' });
  });
});
