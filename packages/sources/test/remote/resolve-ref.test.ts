import { describe, expect, it } from 'vitest';
import type { ScanError } from '@reposcan/contracts';
import { baseCommitOf, parseLsRemote, pickRef } from '../../src/remote/resolve-ref.js';
import { isSafeRefName } from '../../src/remote/ref-name.js';

// The ref-choosing rules, without git: body branch > longest URL ref > remote default.

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const C = 'c'.repeat(40);
const D = 'd'.repeat(40);
const T = 'e'.repeat(40);

const LS_REMOTE = [
  'ref: refs/heads/trunk\tHEAD',
  `${A}\tHEAD`,
  `${A}\trefs/heads/trunk`,
  `${B}\trefs/heads/feature/x`,
  `${C}\trefs/heads/release/2.0/hotfix`,
  `${D}\trefs/heads/--upload-pack=x`,
  `${T}\trefs/tags/feature`,
  `${A}\trefs/tags/feature^{}`,
  `${B}\trefs/tags/v1.0`,
  '',
].join('\n');

const refs = parseLsRemote(LS_REMOTE);
const WEB = 'https://github.com/o/r';

function pick(refFromUrl: string[] | null, kindOfRef: 'tree' | 'blob' | null, requested: string | null = null) {
  return pickRef(refs, { webUrl: WEB, refFromUrl, kindOfRef }, requested);
}

function failure(run: () => unknown): ScanError {
  try {
    run();
  } catch (error) {
    return error as ScanError;
  }
  throw new Error('expected a failure');
}

describe('parseLsRemote', () => {
  it('reads the default branch, heads and tags (annotated tags peeled), dropping names unsafe for argv', () => {
    expect(refs.defaultBranch).toBe('trunk');
    expect([...refs.heads.keys()]).toEqual(['trunk', 'feature/x', 'release/2.0/hotfix']);
    expect(refs.tags.get('feature')).toBe(A);
    expect(refs.tags.get('v1.0')).toBe(B);
  });
});

describe('pickRef', () => {
  it('uses the remote default branch when nothing names one', () => {
    expect(pick(null, null)).toEqual({ branch: 'trunk', commit: A, subdir: null });
  });

  it('splits /tree/<ref-with-slashes>/<folder> by the longest matching ref', () => {
    expect(pick(['feature', 'x', 'docs', 'guide'], 'tree')).toEqual({
      branch: 'feature/x',
      commit: B,
      subdir: 'docs/guide',
    });
    expect(pick(['release', '2.0', 'hotfix'], 'tree')).toEqual({
      branch: 'release/2.0/hotfix',
      commit: C,
      subdir: null,
    });
    // only the tag `feature` matches here
    expect(pick(['feature', 'src'], 'tree')).toEqual({ branch: 'feature', commit: A, subdir: 'src' });
  });

  it('scans the folder of a /blob/ file', () => {
    expect(pick(['feature', 'x', 'docs', 'guide', 'a.md'], 'blob')).toEqual({
      branch: 'feature/x',
      commit: B,
      subdir: 'docs/guide',
    });
    expect(pick(['trunk', 'README.md'], 'blob')).toEqual({ branch: 'trunk', commit: A, subdir: null });
  });

  it("lets the body's branch win over the URL's ref, keeping the URL's folder", () => {
    expect(pick(['feature', 'x', 'docs'], 'tree', 'trunk')).toEqual({ branch: 'trunk', commit: A, subdir: 'docs' });
    expect(pick(['gone', 'docs'], 'tree', 'v1.0')).toEqual({ branch: 'v1.0', commit: B, subdir: 'docs' });
    expect(pick(null, null, 'feature/x')).toEqual({ branch: 'feature/x', commit: B, subdir: null });
  });

  it('fails with BRANCH_NOT_FOUND for an unknown branch, from the body or the URL', () => {
    expect(failure(() => pick(null, null, 'nope'))).toMatchObject({ code: 'BRANCH_NOT_FOUND', retryable: false });
    expect(failure(() => pick(['nope', 'docs'], 'tree'))).toMatchObject({ code: 'BRANCH_NOT_FOUND' });
    expect(failure(() => pick(null, null, 'nope')).message).toMatch(/'nope'.*leave it out to scan the default branch/);
  });

  it("tells a permalink's commit id apart: a scan takes a branch or tag, a commit goes in base_ref", () => {
    const sha = 'c0ffee0123456789abcdef0123456789abcdef01';
    for (const error of [failure(() => pick([sha, 'src'], 'tree')), failure(() => pick(null, null, sha.slice(0, 7)))])
      expect(error).toMatchObject({
        code: 'BRANCH_NOT_FOUND',
        message: expect.stringMatching(/looks like a commit id.*use the URL of the branch.*base_ref/) as unknown,
      });
  });

  it('fails with REPO_NOT_FOUND for an empty repository', () => {
    expect(
      failure(() => pickRef(parseLsRemote(''), { webUrl: WEB, refFromUrl: null, kindOfRef: null }, null)),
    ).toMatchObject({
      code: 'REPO_NOT_FOUND',
    });
  });
});

describe('baseCommitOf', () => {
  it('names the commit a base_ref names: a branch, an annotated tag peeled, a full commit id as it is', () => {
    expect(baseCommitOf(refs, 'trunk')).toBe(A);
    expect(baseCommitOf(refs, 'release/2.0/hotfix')).toBe(C);
    expect(baseCommitOf(refs, 'v1.0')).toBe(B);
    expect(baseCommitOf(refs, D)).toBe(D);
  });

  it('cannot tell a name the listing does not hold, an abbreviated id, or a tag and a branch that disagree', () => {
    expect(baseCommitOf(refs, 'nothing-here')).toBeNull();
    expect(baseCommitOf(refs, 'd'.repeat(12))).toBeNull();
    const both = parseLsRemote(
      `${A}\trefs/heads/same\n${B}\trefs/tags/same\n${C}\trefs/heads/agree\n${C}\trefs/tags/agree\n`,
    );
    expect(baseCommitOf(both, 'same')).toBeNull();
    expect(baseCommitOf(both, 'agree')).toBe(C);
  });
});

describe('isSafeRefName', () => {
  it.each(['main', 'feature/x', 'release/2.0', 'v1.2.3', 'user@fix', 'a+b', 'issue#12', 'under_score'])(
    '%s is accepted',
    (name) => {
      expect(isSafeRefName(name)).toBe(true);
    },
  );

  it.each([
    '',
    '-u',
    '--upload-pack=x',
    '-h',
    'a/-x',
    '.hidden',
    'a/.b',
    'a..b',
    'a@{1}',
    'x.lock',
    'x.',
    'a//b',
    '/a',
    'a/',
    'a b',
    'a\tb',
    'a~1',
    'a^',
    'a:b',
    'a*',
    'a?',
    'a[',
    'a\\b',
    'x'.repeat(201),
  ])('%j is refused', (name) => {
    expect(isSafeRefName(name)).toBe(false);
  });
});
