import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, lstat, rm, chmod } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ScanStateRecord } from '@reposcan/contracts';
import { ScanStore } from '../src/index.js';

export interface TempStore {
  /** Parent of dataDir, so traversal ids such as `../../etc` land inside the sandbox. */
  sandbox: string;
  dataDir: string;
  store: ScanStore;
  cleanup(): Promise<void>;
}

export async function tempStore(): Promise<TempStore> {
  const sandbox = await mkdtemp(join(tmpdir(), 'reposcan-storage-'));
  const dataDir = join(sandbox, 'data');
  const store = new ScanStore({ dataDir });
  await store.init();
  return {
    sandbox,
    dataDir: store.dataDir,
    store,
    cleanup: async () => {
      await restoreModes(sandbox);
      await rm(sandbox, { recursive: true, force: true });
    },
  };
}

/** A valid queued record; `overrides` replace top-level fields. */
export function stateRecord(id: string, overrides: Partial<ScanStateRecord> = {}): ScanStateRecord {
  const now = new Date().toISOString();
  return {
    version: 1,
    scan_id: id,
    state: 'queued',
    source: { type: 'remote', url: 'https://github.com/octocat/Hello-World' },
    created_at: now,
    updated_at: now,
    started_at: null,
    completed_at: null,
    attempt: 0,
    progress: { phase: 'queued', files_done: 0, files_total: 0 },
    error: null,
    result: null,
    ...overrides,
  };
}

export async function createdScan(store: ScanStore, overrides: Partial<ScanStateRecord> = {}): Promise<string> {
  const id = randomUUID();
  await store.create(id, { repo_path: 'https://github.com/octocat/Hello-World' }, stateRecord(id, overrides));
  return id;
}

/** Every path under `root` with its type and mtime: any create, write or delete changes it. */
export async function snapshot(root: string): Promise<string[]> {
  const lines: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    const stats = await lstat(dir);
    lines.push(`${dir} ${stats.isDirectory() ? 'd' : 'f'} ${stats.mtimeMs} ${stats.size}`);
    if (stats.isDirectory()) for (const name of (await readdir(dir)).sort()) await walk(join(dir, name));
  };
  await walk(root);
  return lines;
}

/** Resolves to the ScanError code a call throws or rejects with (undefined when it succeeds). */
export async function errorCode(call: () => unknown): Promise<string | undefined> {
  try {
    await call();
    return undefined;
  } catch (error) {
    return (error as { code?: string }).code;
  }
}

async function restoreModes(dir: string): Promise<void> {
  await chmod(dir, 0o700).catch(() => undefined);
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) if (entry.isDirectory()) await restoreModes(join(dir, entry.name));
}
