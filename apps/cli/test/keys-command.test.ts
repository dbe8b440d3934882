// `reposcan keys add|revoke|list` in this process, on a temporary key file: what the file holds,
// what is printed, and what is refused.
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { matchApiKey, parseApiKeyFile } from '@reposcan/config';
import { runCli } from '../src/run-cli.js';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

describe('reposcan keys', () => {
  let dir: string;
  let file: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'reposcan-keys-'));
    file = join(dir, 'keys');
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function cli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
    let stdout = '';
    let stderr = '';
    const code = await runCli(args, {
      stdout: { write: (t: string) => (stdout += t) },
      stderr: { write: (t: string) => (stderr += t) },
      cwd: dir,
      env,
    });
    return { code, stdout, stderr };
  }

  it('add prints a new key once, alone on stdout, and the file gets only its salted hash', async () => {
    const run = await cli(['keys', 'add', 'alice', '--rate', '5', '--inspect', '9', '--file', file]);
    expect(run.code, run.stderr).toBe(0);
    const key = run.stdout.trim();
    expect(run.stdout).toBe(`${key}\n`);
    expect(key).toMatch(/^rsk_[A-Za-z0-9_-]{43}$/);
    expect(run.stderr).toContain('shown this once');
    const text = await readFile(file, 'utf8');
    expect(text).not.toContain(key);
    expect(text).not.toContain(key.slice(4));
    const { keys, problems } = parseApiKeyFile(text);
    expect(problems).toEqual([]);
    expect(keys).toMatchObject([{ name: 'alice', admin: false, rate: 5, inspect: 9 }]);
    expect(matchApiKey(keys, key)?.name).toBe('alice');
    // Hashes are not keys, but the file is nobody else's business: created 0600.
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });

  it('add refuses a name in use; revoke removes that line alone and keeps comments and other keys', async () => {
    await writeFile(file, '# our keys\n', { mode: 0o640 });
    const alice = (await cli(['keys', 'add', 'alice', '--file', file])).stdout.trim();
    const root = (await cli(['keys', 'add', 'root', '--admin'], { API_KEYS_FILE: file })).stdout.trim();
    const again = await cli(['keys', 'add', 'alice', '--file', file]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('has a key named alice already');
    expect(again.stdout).toBe('');

    const list = await cli(['keys', 'list', '--file', file]);
    expect(list.stdout).toBe('alice scope=user\nroot scope=admin\n');
    expect(list.stdout).not.toContain(alice);

    const revoke = await cli(['keys', 'revoke', 'alice', '--file', file]);
    expect(revoke.code, revoke.stderr).toBe(0);
    const text = await readFile(file, 'utf8');
    expect(text.startsWith('# our keys\nroot ')).toBe(true);
    const { keys } = parseApiKeyFile(text);
    expect(matchApiKey(keys, alice)).toBeNull();
    expect(matchApiKey(keys, root)?.name).toBe('root');
    // The rewrite keeps the file's own permissions.
    expect((await stat(file)).mode & 0o777).toBe(0o640);

    const unknown = await cli(['keys', 'revoke', 'alice', '--file', file]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('has no key named alice');
  });

  it('edits made at the same time all land (the rewrite runs under a lock)', async () => {
    const names = Array.from({ length: 8 }, (_, i) => `k${i}`);
    const runs = await Promise.all(names.map((name) => cli(['keys', 'add', name, '--file', file])));
    expect(runs.map((r) => r.code)).toEqual(names.map(() => 0));
    const { keys } = parseApiKeyFile(await readFile(file, 'utf8'));
    expect(keys.map((k) => k.name).sort()).toEqual(names);
    for (const [i, run] of runs.entries()) expect(matchApiKey(keys, run.stdout.trim())?.name).toBe(names[i]);
  });

  it.each([
    [['keys'], 'needs an action'],
    [['keys', 'add'], "needs the key's name"],
    [['keys', 'add', 'x y', '--file', 'k'], "a key's name is"],
    [['keys', 'add', 'bob'], 'say which key file'],
    [['keys', 'revoke', 'bob', '--admin', '--file', 'k'], 'use them with reposcan keys add'],
    [['keys', 'add', 'bob', '--rate', 'fast', '--file', 'k'], '--rate must be a whole number'],
    [['keys', 'rotate', 'bob'], 'must be one of add, revoke, list'],
    [['scan', '.', '--local', '--api-key', 'rsk_x'], 'needs no --api-key'],
  ])('%j is a usage error (exit 2)', async (args, message) => {
    const run = await cli(args);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(message);
  });

  it('keys --help explains the file and that the key is stored nowhere', async () => {
    const run = await cli(['keys', '--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('reposcan keys add <name>');
    expect(run.stdout).toContain('The key itself is stored nowhere');
  });
});
