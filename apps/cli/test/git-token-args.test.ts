import { describe, expect, it } from 'vitest';
import { parseCliArgs } from '../src/cli-args.js';
import type { ScanArgs } from '../src/cli-args.js';
import { gitTokenFor } from '../src/scan-target.js';

const REMOTE = { kind: 'remote', repoPath: 'https://github.com/acme/private' } as const;
const FOLDER = { kind: 'folder', path: '/srv/repo' } as const;

function scanArgs(argv: string[], env: NodeJS.ProcessEnv = {}): ScanArgs {
  return parseCliArgs(['scan', ...argv], env) as ScanArgs;
}

describe('--git-token and REPOSCAN_GIT_TOKEN', () => {
  it('the flag wins over the variable; either is sent for a remote repository', () => {
    const fromFlag = scanArgs(['https://github.com/acme/private', '--git-token', 'me:flag'], {
      REPOSCAN_GIT_TOKEN: 'env',
    });
    expect(fromFlag.gitToken).toEqual({ value: 'me:flag', from: '--git-token' });
    expect(gitTokenFor(REMOTE, fromFlag.gitToken)).toBe('me:flag');
    const fromEnv = scanArgs(['https://github.com/acme/private'], { REPOSCAN_GIT_TOKEN: 'env' });
    expect(gitTokenFor(REMOTE, fromEnv.gitToken)).toBe('env');
    expect(scanArgs(['https://github.com/acme/private']).gitToken).toBeUndefined();
  });

  it('a folder or a .zip: the flag is a usage error, the variable is simply not sent', () => {
    expect(() => gitTokenFor(FOLDER, { value: 'tok', from: '--git-token' })).toThrow(/clones nothing/);
    expect(gitTokenFor(FOLDER, { value: 'tok', from: 'REPOSCAN_GIT_TOKEN' })).toBeUndefined();
  });

  it('--local refuses the flag and ignores the variable', () => {
    expect(() => scanArgs(['--local', '.', '--git-token', 'tok'])).toThrow(/--local reads the folder on disk/);
    expect(scanArgs(['--local', '.'], { REPOSCAN_GIT_TOKEN: 'env' }).gitToken).toBeUndefined();
  });

  it('inspect takes it too', () => {
    const args = parseCliArgs(['inspect', 'https://gitlab.com/acme/private', '--git-token', 'glpat'], {});
    expect(args).toMatchObject({ command: 'inspect', gitToken: { value: 'glpat', from: '--git-token' } });
  });
});
