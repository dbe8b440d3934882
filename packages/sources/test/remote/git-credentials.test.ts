import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  checkGitCredentialsFile,
  credentialFor,
  parseGitCredential,
  parseGitCredentials,
  parseRepoPath,
  scrubSecrets,
} from '../../src/remote/index.js';
import type { RemoteSpec } from '../../src/remote/index.js';

function spec(url: string): RemoteSpec {
  const parsed = parseRepoPath(url);
  if (parsed.kind !== 'remote') throw new Error('not a remote');
  return parsed.url;
}

describe('parseGitCredential', () => {
  it('a bare token leaves the user name to the host; user:token splits at the first colon', () => {
    expect(parseGitCredential('ghp_abc')).toEqual({ username: null, password: 'ghp_abc' });
    expect(parseGitCredential('me:app:pass')).toEqual({ username: 'me', password: 'app:pass' });
  });

  it.each([':s3cret', 'me:', 'has space', 'tab\there', 'line\nbreak', 'é'])(
    'refuses %j without repeating it',
    (text) => {
      expect(() => parseGitCredential(text)).toThrow(
        expect.objectContaining({ code: 'INVALID_REQUEST', message: expect.not.stringContaining(text) }),
      );
    },
  );
});

describe('parseGitCredentials (GIT_CREDENTIALS_FILE)', () => {
  const file = [
    '# per-host tokens',
    '',
    '  github.com   ghp_one  ',
    'GitLab.Example.COM. oauth2:glpat-two',
    'git.example.com:8443 builder:three',
    '[::1]:3000 four',
    '\t# indented comment',
  ].join('\r\n');

  it('reads host and host:port lines, skipping blanks and comments, hosts lower-cased', () => {
    expect([...parseGitCredentials(file)]).toEqual([
      ['github.com', { username: null, password: 'ghp_one' }],
      ['gitlab.example.com', { username: 'oauth2', password: 'glpat-two' }],
      ['git.example.com:8443', { username: 'builder', password: 'three' }],
      ['[::1]:3000', { username: null, password: 'four' }],
    ]);
  });

  it('picks the host:port line first, then the host line (any port), else none', () => {
    const credentials = parseGitCredentials('example.com any-port\nexample.com:8443 this-port\n');
    expect(credentialFor(credentials, spec('https://example.com:8443/a/b'))?.password).toBe('this-port');
    expect(credentialFor(credentials, spec('https://example.com/a/b'))?.password).toBe('any-port');
    expect(credentialFor(credentials, spec('https://other.example.com/a/b'))).toBeNull();
    expect(credentialFor(parseGitCredentials('[::1]:3000 v6'), spec('http://[::1]:3000/a/b'))?.password).toBe('v6');
  });

  it.each([
    ['github.com', 'line 1: expected'],
    ['github.com a b', 'line 1: expected'],
    ['https://github.com tok', 'line 1: "https://github.com" is not a host'],
    ['# c\ngithub.com :tok', 'line 2: the credential must be'],
    ['github.com one\nGITHUB.COM two', 'line 2: github.com was already given'],
  ])('names the line of a mistake, never its token: %j', (text, message) => {
    let error: unknown;
    try {
      parseGitCredentials(text);
    } catch (caught) {
      error = caught;
    }
    expect(error).toMatchObject({ name: 'GitCredentialsFileError', message: expect.stringContaining(message) });
    expect((error as Error).message).not.toMatch(/\btok\b|\btwo\b/);
  });
});

describe('scrubSecrets', () => {
  it('replaces every occurrence, the longer secret first', () => {
    expect(scrubSecrets('a tok b me:tok c tok', ['tok', 'me:tok'])).toBe('a *** b *** c ***');
    expect(scrubSecrets('nothing here', [])).toBe('nothing here');
  });
});

describe('checkGitCredentialsFile (at start)', () => {
  it('passes a good file or none; stops on a bad or missing one with a ConfigError naming the line', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'reposcan-credentials-'));
    try {
      const good = path.join(dir, 'good');
      const bad = path.join(dir, 'bad');
      writeFileSync(good, 'github.com ghp_x\n');
      writeFileSync(bad, 'github.com ghp_x\ngitlab.com\n');
      await expect(checkGitCredentialsFile(null)).resolves.toBeUndefined();
      await expect(checkGitCredentialsFile(good)).resolves.toBeUndefined();
      await expect(checkGitCredentialsFile(bad)).rejects.toMatchObject({
        name: 'ConfigError',
        problems: [expect.stringMatching(/^GIT_CREDENTIALS_FILE line 2: expected/)],
      });
      await expect(checkGitCredentialsFile(path.join(dir, 'missing'))).rejects.toMatchObject({
        name: 'ConfigError',
        problems: [expect.stringMatching(/cannot be read \(ENOENT\)/)],
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
