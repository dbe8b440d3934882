import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ScanError } from '@reposcan/contracts';
import { prepareSource } from '../../src/prepare-source.js';
import { createFixtures } from './helpers/fixture-repos.js';
import type { Fixtures } from './helpers/fixture-repos.js';
import { startGitHttpServer } from './helpers/git-http-server.js';
import type { GitHttpServer } from './helpers/git-http-server.js';
import { loopbackSourceSettings } from './helpers/loopback-settings.js';

// Private repositories: real git against a loopback server that wants HTTP basic credentials.
// The credential comes from the request (gitToken) or GIT_CREDENTIALS_FILE, reaches git through
// its environment only, and is in no file of the clone and no error.

const TOKEN = `tok-${randomUUID()}`;
const OTHER = `other-${randomUUID()}`;

let fixtures: Fixtures;
let github: GitHttpServer; // wants GitHub's user name beside a bare token
let anyUser: GitHttpServer; // wants a token whatever the name (Gitea)
let careless: GitHttpServer; // quotes the credentials back in an error
let work: string;

beforeAll(async () => {
  fixtures = createFixtures();
  github = await startGitHttpServer(fixtures.projectRoot, { auth: { username: 'x-access-token', password: TOKEN } });
  anyUser = await startGitHttpServer(fixtures.projectRoot, { auth: { password: TOKEN } });
  careless = await startGitHttpServer(fixtures.projectRoot, { echoCredentials: true });
  work = mkdtempSync(path.join(os.tmpdir(), 'reposcan-private-clone-'));
});

afterAll(async () => {
  await Promise.all([github.close(), anyUser.close(), careless.close()]);
  fixtures.cleanup();
  rmSync(work, { recursive: true, force: true });
});

async function clone(repoPath: string, gitToken: string | null, fileText?: string) {
  const workDir = path.join(work, randomUUID());
  mkdirSync(workDir);
  let file: string | null = null;
  if (fileText !== undefined) {
    file = path.join(work, `${randomUUID()}.credentials`);
    writeFileSync(file, fileText, { mode: 0o600 });
  }
  const prepared = await prepareSource(
    { type: 'remote', repo_path: repoPath, branch: null },
    {
      workDir,
      uploadPath: null,
      settings: loopbackSourceSettings(file),
      signal: new AbortController().signal,
      onPhase: () => {},
      gitToken,
    },
  );
  return { prepared, workDir };
}

async function failure(promise: Promise<unknown>): Promise<ScanError> {
  return promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (error: unknown) => error as ScanError,
  );
}

/** Every form of `secret` a leak could take. */
function forms(secret: string, username = 'x-access-token'): string[] {
  return [secret, Buffer.from(secret).toString('base64'), Buffer.from(`${username}:${secret}`).toString('base64')];
}

/** Files under `dir` (recursively) whose bytes contain any of `needles`. */
function filesContaining(dir: string, needles: string[]): string[] {
  const hits: string[] = [];
  const walk = (folder: string): void => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const full = path.join(folder, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile() && statSync(full).size < 64 * 1024 * 1024) {
        const bytes = readFileSync(full);
        if (needles.some((needle) => bytes.includes(needle))) hits.push(full);
      }
    }
  };
  walk(dir);
  return hits;
}

describe('cloning a private repository over HTTP basic authentication', () => {
  it('without a credential: REPO_AUTH_FAILED that says how to send one (not REPO_NOT_FOUND)', async () => {
    const error = await failure(clone(`${github.origin}/acme/widgets.git`, null));
    expect(error).toMatchObject({ code: 'REPO_AUTH_FAILED', retryable: false });
    expect(error.message).toContain('git_token');
  });

  it("a bare token goes with the host's usual user name, and is in no file of the clone", async () => {
    const { prepared, workDir } = await clone(`${github.origin}/acme/widgets.git`, TOKEN);
    expect(prepared.source.commit).toBe(fixtures.commits.trunk);
    expect(readFileSync(path.join(prepared.root, 'src/app.ts'), 'utf8')).toBe('export const app = 1;\n');
    expect(filesContaining(workDir, forms(TOKEN))).toEqual([]);
  });

  it('user:token names the user; a folder URL fetches its blobs on demand with the same credential', async () => {
    const { prepared } = await clone(`${anyUser.origin}/acme/widgets/tree/trunk/src`, `someone:${TOKEN}`);
    expect(prepared.source.subdir).toBe('src');
    expect(readFileSync(path.join(prepared.root, 'src/app.ts'), 'utf8')).toBe('export const app = 1;\n');
  });

  it('a wrong token: REPO_AUTH_FAILED saying to check the token; the token is nowhere in the error', async () => {
    const error = await failure(clone(`${github.origin}/acme/widgets.git`, OTHER));
    expect(error).toMatchObject({ code: 'REPO_AUTH_FAILED' });
    expect(error.message).toMatch(/refused the git credential: check that the token/);
    expect(JSON.stringify(errorChain(error))).not.toContain(OTHER);
  });

  it("git's output is scrubbed of every form of the credential before it reaches an error", async () => {
    const error = await failure(clone(`${careless.origin}/acme/widgets.git`, `someone:${TOKEN}`));
    const chain = JSON.stringify(errorChain(error));
    // The host did quote it: git's scrubbed text shows where.
    expect(chain).toContain('credentials *** (Basic ***) are not welcome');
    for (const form of [...forms(TOKEN, 'someone'), `someone:${TOKEN}`]) expect(chain).not.toContain(form);
  });

  it('GIT_CREDENTIALS_FILE: the line of the host:port, else of the host; a request token wins over it', async () => {
    const host = new URL(github.origin).host;
    const file = `# operators' tokens\n\n127.0.0.1 ${OTHER}\n${host}  x-access-token:${TOKEN}   \n`;
    const { prepared } = await clone(`${github.origin}/acme/widgets.git`, null, file);
    expect(prepared.source.commit).toBe(fixtures.commits.trunk);
    // host alone: any port of it
    await expect(clone(`${github.origin}/acme/widgets.git`, null, `127.0.0.1 ${TOKEN}\n`)).resolves.toBeTruthy();
    // the request's (wrong) token is used, not the file's right one
    const error = await failure(clone(`${github.origin}/acme/widgets.git`, OTHER, file));
    expect(error.code).toBe('REPO_AUTH_FAILED');
  });

  it('refuses to send a token over plain http to a host that is not loopback', async () => {
    const error = await failure(clone('http://192.168.0.10/acme/widgets.git', TOKEN));
    expect(error).toMatchObject({ code: 'GIT_TOKEN_NOT_ACCEPTED' });
    expect(error.message).toContain('https');
    // An operator's credential neither: the scan is refused before any connection.
    const fromFile = await failure(clone('http://192.168.0.10/acme/widgets.git', null, `192.168.0.10 ${TOKEN}\n`));
    expect(fromFile).toMatchObject({ code: 'GIT_TOKEN_NOT_ACCEPTED' });
    expect(fromFile.message).toMatch(/never sends over plain http/);
  });
});

/** An error and its causes, as plain data: what a log line of it could show. */
function errorChain(error: unknown): unknown[] {
  const chain: unknown[] = [];
  let current: unknown = error;
  while (current instanceof Error) {
    chain.push({ ...current, message: current.message, stack: current.stack });
    current = current.cause;
  }
  return chain;
}
