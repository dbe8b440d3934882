// Shared by the walk tests: real temporary trees under the OS temp folder, removed after each
// test, and a walk with the default options that returns what a user would see.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach } from 'vitest';
import { fsPath, pathBytesOf } from '../../src/path-bytes.js';
import { DEFAULT_ENGINE_LIMITS, DEFAULT_SCAN_OPTIONS, type EngineLimits, type ScanOptions } from '../../src/types.js';
import type { WalkDeps } from '../../src/walk/index.js';
import { walkTree, type WalkInput } from '../../src/walk/index.js';

/**
 * Paths ending in `/` are folders; `{ link }` is a symbolic link; anything else is file content.
 * Paths are carried as path-bytes.ts says: `caf\udce9` is a name with the byte 0xE9.
 */
export type TreeSpec = Record<string, string | { link: string } | null>;

export async function writeTree(root: string, spec: TreeSpec): Promise<void> {
  for (const [path, content] of Object.entries(spec)) {
    const abs = join(root, path);
    if (path.endsWith('/')) {
      await mkdir(fsPath(abs), { recursive: true });
      continue;
    }
    await mkdir(fsPath(dirname(abs)), { recursive: true });
    if (content !== null && typeof content === 'object') await symlink(content.link, fsPath(abs));
    else await writeFile(fsPath(abs), pathBytesOf(content ?? ''));
  }
}

/** Registers cleanup for the calling test file and returns a tree factory. */
export function useTempTrees(): (spec?: TreeSpec) => Promise<string> {
  const made: string[] = [];
  afterEach(async () => {
    await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
  });
  return async (spec = {}) => {
    const root = await mkdtemp(join(tmpdir(), 'reposcan-walk-'));
    made.push(root);
    await writeTree(root, spec);
    return root;
  };
}

export interface WalkOverrides {
  subdir?: string | null;
  options?: Partial<WalkInput['options']>;
  limits?: Partial<EngineLimits>;
  acceptFile?: (relPath: string) => boolean;
  deps?: Partial<WalkDeps>;
  git?: WalkInput['git'];
}

export function defaultOptions(): Pick<
  ScanOptions,
  'excludeDirs' | 'includePatterns' | 'excludePatterns' | 'syncIgnore' | 'sizeLimit'
> {
  const { excludeDirs, includePatterns, excludePatterns, syncIgnore, sizeLimit } = DEFAULT_SCAN_OPTIONS;
  return { excludeDirs, includePatterns, excludePatterns, syncIgnore, sizeLimit };
}

export async function walk(root: string, overrides: WalkOverrides = {}) {
  const result = await walkTree(
    {
      root,
      subdir: overrides.subdir ?? null,
      options: { ...defaultOptions(), ...overrides.options },
      limits: { ...DEFAULT_ENGINE_LIMITS, ...overrides.limits },
      ...(overrides.acceptFile ? { acceptFile: overrides.acceptFile } : {}),
      ...(overrides.git ? { git: overrides.git } : {}),
    },
    overrides.deps,
  );
  return {
    ...result,
    paths: result.files.map((file) => file.path),
    /** `path -> reason` of every skipped path. */
    reasons: Object.fromEntries(result.skipped.map((entry) => [entry.path, entry.reason])),
  };
}

export const onWindows = process.platform === 'win32';

/** Whether this file system takes a name that is not UTF-8 (APFS and Windows refuse one). */
export const takesRawNames: boolean = (() => {
  const dir = mkdtempSync(join(tmpdir(), 'reposcan-raw-name-'));
  try {
    writeFileSync(Buffer.concat([Buffer.from(`${dir}/caf`), Buffer.of(0xe9)]), '');
    // A file system may take the name and store another (Windows: U+FFFD).
    return readdirSync(dir, { encoding: 'buffer' })[0]?.equals(Buffer.from('caf\xe9', 'latin1')) === true;
  } catch {
    return false;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
})();
