import { describe, expect, it } from 'vitest';
import { buildRows, consistencyChecks, Recorder } from '../lib/report.js';
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
