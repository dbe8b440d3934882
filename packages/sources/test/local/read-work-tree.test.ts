import { execFileSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readWorkTree } from '../../src/local/index.js';
import { takesRawNames } from '../remote/helpers/fixture-repos.js';

const base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'reposcan-work-tree-test-')));
afterAll(() => rmSync(base, { recursive: true, force: true }));

const gitEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: base, GIT_CONFIG_NOSYSTEM: '1' };

describe.skipIf(!takesRawNames)('a work tree with names that are not UTF-8', () => {
  it('lists them tracked by their bytes, as the walk carries them (\\udce9 is the byte 0xE9)', async () => {
    const top = path.join(base, 'repo');
    execFileSync('git', ['init', '-q', top], { env: gitEnv });
    writeFileSync(Buffer.from(path.join(top, 'caf\xe9.txt'), 'latin1'), 'x\n');
    writeFileSync(path.join(top, 'café.txt'), 'x\n');
    execFileSync('git', ['add', '-A'], { cwd: top, env: gitEnv });
    const tree = await readWorkTree(top, base);
    expect(tree?.tracked.sort()).toEqual(['caf\udce9.txt', 'café.txt'].sort());
  });
});
