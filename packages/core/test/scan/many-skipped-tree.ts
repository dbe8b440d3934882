import { closeSync, mkdirSync, openSync } from 'node:fs';
import { access, constants, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Spreading a walk's skipped paths into one call (`push(...skipped)`) overflowed the stack from
 * about 124 000 of them (Node 20, default stack): every argument takes a slot. 150 000 is well past
 * that at any stack depth.
 */
export const MANY_SKIPPED = 150_000;
const PER_FOLDER = 1000;

export interface ManySkippedTree {
  /** Parent of `root`: an ALLOWED_LOCAL_ROOTS entry for API tests. */
  base: string;
  root: string;
  /** Files excluded by `*.skip`, in folders `a000/` … of PER_FOLDER each. */
  excluded: number;
  /** Files kept by the patterns, all in `z/`, the last folder: past a small MAX_SCAN_FILES each is listed as `limit`. */
  kept: number;
  cleanup(): Promise<void>;
}

/**
 * A tree of `excluded` empty `*.skip` files plus `kept` empty `*.txt` files. Made in /dev/shm when
 * there is one: on a busy disk, 150 000 inodes took 40 s to create against 4 s in memory.
 */
export async function makeManySkippedTree(excluded = MANY_SKIPPED, kept = PER_FOLDER): Promise<ManySkippedTree> {
  const parent = await access('/dev/shm', constants.W_OK).then(
    () => '/dev/shm',
    () => tmpdir(),
  );
  const base = await mkdtemp(join(parent, 'reposcan-many-'));
  const root = join(base, 'many');
  mkdirSync(root);
  for (let folder = 0; folder * PER_FOLDER < excluded; folder++) {
    const dir = join(root, `a${String(folder).padStart(3, '0')}`);
    mkdirSync(dir);
    for (let i = 0; i < PER_FOLDER && folder * PER_FOLDER + i < excluded; i++)
      closeSync(openSync(join(dir, `f${String(i).padStart(4, '0')}.skip`), 'w'));
  }
  mkdirSync(join(root, 'z'));
  for (let i = 0; i < kept; i++) closeSync(openSync(join(root, 'z', `f${String(i).padStart(4, '0')}.txt`), 'w'));
  return { base, root, excluded, kept, cleanup: () => rm(base, { recursive: true, force: true }) };
}
