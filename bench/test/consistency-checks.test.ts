import { describe, expect, it } from 'vitest';
import { buildRows, commitCacheTarget, consistencyChecks, Recorder } from '../lib/report.js';
import type { Corpus } from '../lib/corpora.js';
import type { Sample } from '../lib/scan-runs.js';

const corpus: Corpus = { id: 'c', description: '', root: '/nowhere', files: 10, bytes: 1e6 };
const run = (files: number, tokens: number): Sample => ({ wallMs: 1000, peakRssMb: 100, files, tokens });

function checks(samples: Record<string, Sample[]>): string[] {
  const recorder = new Recorder();
  for (const [key, list] of Object.entries(samples)) for (const s of list) recorder.add(corpus, key, s);
  return consistencyChecks(buildRows(recorder, [corpus]));
}

describe('consistencyChecks', () => {
  it('passes when every reposcan path and the floors count the same tokens (the floors count textual files only)', () => {
    expect(
      checks({
        'engine-cold': [run(10, 500)],
        'api-scan-cold': [run(10, 500), run(10, 500)],
        'token-floor': [run(9, 500)],
        'scan-floor': [run(9, 500)],
        'repomix-plain-cold': [run(9, 520)],
      }),
    ).toEqual([]);
  });

  it('flags a token total that differs between runs, e.g. a warm run served from a wrong cache', () => {
    expect(
      checks({ 'engine-cold': [run(10, 500)], 'api-scan-warm': [run(10, 501)], 'token-floor': [run(10, 500)] }),
    ).toEqual(['c: tokens differ between runs: api-scan-warm 501, engine-cold 500, token-floor 500']);
  });

  it('flags repomix packing a different tree (it applied an ignore file reposcan did not)', () => {
    expect(checks({ 'engine-cold': [run(10, 500)], 'repomix-plain-cold': [run(0, 352)] })).toEqual([
      'c: repomix-plain-cold packed 0 files, reposcan scanned 10: not the same tree',
    ]);
  });
});

describe('consistencyChecks, the count + write floor', () => {
  it('flags it counting other tokens than the scans', () => {
    expect(
      checks({ 'engine-cold': [run(10, 500)], 'token-floor': [run(9, 500)], 'scan-floor': [run(9, 499)] }),
    ).toEqual(['c: tokens differ between runs: engine-cold 500, token-floor 500, scan-floor 499']);
  });
});

describe('consistencyChecks, the one-file commit rows', () => {
  const digest = (changes: Record<string, number> | undefined): Sample => ({
    ...run(1, 40),
    extra: changes ? { changes } : {},
  });
  const oneModified = { added: 0, modified: 1, renamed: 0, deleted: 0, binary: 0 };

  it('passes a rescan of the whole commit and a digest of the one modified file', () => {
    expect(
      checks({
        'api-clone-commit-cold': [run(10, 500)],
        'api-clone-one-file-commit': [run(10, 514)],
        'api-clone-change-digest': [digest(oneModified)],
      }),
    ).toEqual([]);
  });

  it('flags a rescan that scanned less than the commit (only what changed, say)', () => {
    expect(checks({ 'api-clone-commit-cold': [run(10, 500)], 'api-clone-one-file-commit': [run(1, 40)] })).toEqual([
      'c: the rescan after a one-file commit scanned 1 files, the cold scan 10',
      "c: the rescan after a one-file commit counted 40 tokens, not more than the cold scan's 500",
    ]);
  });

  it('flags a digest that holds another change than the one modified file, or none', () => {
    expect(
      checks({
        'api-clone-change-digest': [
          digest({ ...oneModified, added: 1 }),
          digest({ ...oneModified, modified: 0 }),
          digest(undefined),
        ],
      }),
    ).toEqual([
      'c: the change digest of a one-file commit should hold one modified file, it held {"added":1,"modified":1,"renamed":0,"deleted":0,"binary":0}',
      'c: the change digest of a one-file commit should hold one modified file, it held {"added":0,"modified":0,"renamed":0,"deleted":0,"binary":0}',
      'c: the change digest of a one-file commit should hold one modified file, it held no changes',
    ]);
  });

  it('flags a digest of the every-file commit that misses a file the cold scan kept', () => {
    const every = (modified: number): Sample => digest({ ...oneModified, modified });
    expect(
      checks({
        'api-clone-commit-cold': [run(10, 500)],
        'api-clone-change-digest-every-file': [every(10), every(9)],
      }),
    ).toEqual([
      'c: the change digest of a commit that changes every file should hold the cold scan\'s 10 files as modified, it held {"added":0,"modified":9,"renamed":0,"deleted":0,"binary":0}',
    ]);
  });

  it('flags a repeat served by the commit cache that holds another count than the scan it came from', () => {
    expect(checks({ 'api-clone-commit-cold': [run(10, 500)], 'api-clone-commit-cached': [run(10, 0)] })).toEqual([
      'c: tokens differ between runs: api-clone-commit-cold 500, api-clone-commit-cached 0',
    ]);
  });

  it('flags the cold scan of the copy counting other tokens than the other cold scans', () => {
    expect(checks({ 'api-clone-cold': [run(10, 500)], 'api-clone-commit-cold': [run(10, 499)] })).toEqual([
      'c: tokens differ between runs: api-clone-cold 500, api-clone-commit-cold 499',
    ]);
  });
});

describe('commitCacheTarget', () => {
  const cachedRow = (runs: Array<[number, number | undefined]>) => {
    const recorder = new Recorder();
    for (const [wallMs, lsRemote] of runs)
      recorder.add(corpus, 'api-clone-commit-cached', {
        ...run(10, 500),
        wallMs,
        extra: lsRemote === undefined ? {} : { ls_remote_ms: lsRemote },
      });
    return buildRows(recorder, [corpus]).find((r) => r.key === 'api-clone-commit-cached');
  };

  it('judges the median of each repeat less its own ls-remote against 100 ms', () => {
    expect(
      commitCacheTarget(
        cachedRow([
          [150, 90],
          [200, 80],
          [130, 100],
        ]),
      ),
    ).toMatchObject({ value: 60, met: true, measured: '60 ms (150 ms, ls-remote 90 ms)' });
    expect(commitCacheTarget(cachedRow([[260, 90]]))).toMatchObject({ value: 170, met: false });
  });

  it('is not measured without the row or without the ls-remote time', () => {
    expect(commitCacheTarget(undefined)).toMatchObject({ value: null, met: null, measured: 'not measured' });
    expect(commitCacheTarget(cachedRow([[150, undefined]]))).toMatchObject({ value: null, met: null });
  });
});
