import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { artifactDirRelative } from '../src/index.js';
import { errorCode, snapshot, stateRecord, tempStore } from './temp-store.js';
import type { TempStore } from './temp-store.js';

// Every node:fs/promises call made by the store is recorded, to prove an invalid id is refused
// before the file system is touched at all (T9), not merely before anything is written.
const fsCalls = vi.hoisted(() => [] as string[]);
vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<Record<string, unknown>>();
  const wrapped = Object.entries(actual).map(([name, value]) => [
    name,
    typeof value === 'function'
      ? (...args: unknown[]) => {
          fsCalls.push(name);
          return (value as (...a: unknown[]) => unknown)(...args);
        }
      : value,
  ]);
  return Object.fromEntries(wrapped) as Record<string, unknown>;
});

const BAD_IDS: [string, string][] = [
  ['..%2F..%2Fetc decoded', decodeURIComponent('..%2F..%2Fetc')],
  ['..%2F..%2Fetc%2Fpasswd decoded', decodeURIComponent('..%2F..%2Fetc%2Fpasswd')],
  ['NUL inside', 'abc\u0000def'],
  ['upper-case UUID', '3F0C2A51-8D7E-4B1A-9C3E-2F6D5B4A1E90'],
  ['10 000 characters', 'a'.repeat(10_000)],
  ['dot', '.'],
  ['dot-dot', '..'],
  ['empty', ''],
  ['UUID with a traversal suffix', `${randomUUID()}/../..`],
  ['UUID with a NUL suffix', `${randomUUID()}\u0000`],
  ['UUID v1', '3f0c2a51-8d7e-1b1a-9c3e-2f6d5b4a1e90'],
];

describe('scan_id validation', () => {
  let t: TempStore;
  const valid = randomUUID();

  beforeAll(async () => {
    t = await tempStore();
    // A victim where `../../etc` would land relative to scans/.
    await mkdir(join(t.sandbox, 'etc'));
    await writeFile(join(t.sandbox, 'etc', 'passwd'), 'root:x:0:0');
  });
  afterAll(() => t.cleanup());

  const calls = (id: string): Record<string, () => unknown> => ({
    scanDir: () => t.store.scanDir(id),
    create: () => t.store.create(id, {}, stateRecord(valid)),
    readState: () => t.store.readState(id),
    readRequest: () => t.store.readRequest(id),
    updateState: () => t.store.updateState(id, (s) => ({ ...s, state: 'failed' })),
    createStaging: () => t.store.createStaging(id, 1),
    publish: () => t.store.publish(id, join(t.sandbox, 'etc')),
    resultFile: () => t.store.resultFile(id, 'output.txt'),
    uploadPath: () => t.store.uploadPath(id),
    requestCancel: () => t.store.requestCancel(id),
    isCancelRequested: () => t.store.isCancelRequested(id),
    remove: () => t.store.remove(id),
    listStaging: () => t.store.listStaging(id),
    artifactDirRelative: () => artifactDirRelative(id),
  });

  it.each(BAD_IDS)('refuses %s in every method before any file-system call', async (_label, id) => {
    const before = await snapshot(t.sandbox);
    for (const [method, call] of Object.entries(calls(id))) {
      fsCalls.length = 0;
      expect(await errorCode(call), method).toBe('INVALID_SCAN_ID');
      expect(fsCalls, method).toEqual([]);
    }
    expect(await snapshot(t.sandbox)).toEqual(before);
  });

  it('control: the spy does see the store touching the file system for a valid id', async () => {
    fsCalls.length = 0;
    expect(await t.store.readState(valid)).toBeNull();
    expect(fsCalls).toContain('lstat');
  });

  it('accepts a server-made UUID and keeps it inside scans/', () => {
    expect(t.store.scanDir(valid)).toBe(join(t.dataDir, 'scans', valid));
    expect(artifactDirRelative(valid)).toBe(`scans/${valid}/result`);
  });

  it('does not echo the refused id in the message', async () => {
    const id = 'x'.repeat(10_000);
    await expect(t.store.readState(id)).rejects.toThrow(/^A scan_id is the lowercase UUID/);
    await expect(t.store.readState(id)).rejects.not.toThrow(/xxxx/);
  });
});
