import { describe, expect, it } from 'vitest';
import { createTokenCounter, estimateTokens, estimateTokensFromBytes } from '../../src/tokens/index.js';
import { GROUPS, hasPythonStdlib, sampleGroup } from './corpus.js';
import type { CorpusGroup } from './corpus.js';

// Measured on these samples (o200k_base, error of the group total): ts +1.9 %, d.ts +1.2 %, js +3.1 %,
// md −0.5 %, py −0.5 %, json −3.5 %, minified+map −0.7 %; chars/4 gives −11.8 %, −13.0 %, −3.2 %,
// −8.3 %, +1.8 %, −34.2 %, −41.1 % on the same groups.
const exact = createTokenCounter('o200k_base');

function groupError(group: CorpusGroup, budget = 1_500_000): number {
  const files = sampleGroup(group, budget);
  expect(files.length).toBeGreaterThan(5);
  let estimated = 0;
  let counted = 0;
  for (const file of files) {
    estimated += estimateTokens(file.text);
    counted += exact.count(file.text);
  }
  return estimated / counted - 1;
}

// How much cheaper than exact counting it is: `npm run bench` (micro-benchmarks).
describe('estimateTokens', () => {
  it.each([GROUPS.ts, GROUPS.dts, GROUPS.js, GROUPS.md])(
    'is within 10 % of the exact o200k total on $name',
    (group) => {
      expect(Math.abs(groupError(group))).toBeLessThan(0.1);
    },
  );

  it.skipIf(!hasPythonStdlib())('is within 10 % of the exact o200k total on Python (the standard library)', () => {
    expect(Math.abs(groupError(GROUPS.py))).toBeLessThan(0.1);
  });

  it('stays within 20 % on JSON, minified bundles and source maps', () => {
    expect(Math.abs(groupError(GROUPS.json))).toBeLessThan(0.2);
    expect(Math.abs(groupError(GROUPS.generated, 3_000_000))).toBeLessThan(0.2);
  });

  it('handles empty, tiny and non-ASCII text', () => {
    expect(estimateTokens('')).toBe(0);
    expect(estimateTokens('a')).toBe(1);
    expect(estimateTokens(' ')).toBe(1);
    expect(estimateTokens('\uD800')).toBeGreaterThanOrEqual(1);
    const cjk = '日本語のテキストと中文文本。'.repeat(50);
    expect(Math.abs(estimateTokens(cjk) / exact.count(cjk) - 1)).toBeLessThan(0.5);
  });
});

describe('estimateTokensFromBytes', () => {
  const encoder = new TextEncoder();

  it('equals estimateTokens on ASCII and stays close on UTF-8', () => {
    const files = [GROUPS.ts, GROUPS.md].flatMap((group) => sampleGroup(group, 300_000));
    let fromText = 0;
    let fromBytes = 0;
    for (const file of files) {
      const text = estimateTokens(file.text);
      const bytes = estimateTokensFromBytes(encoder.encode(file.text));
      if (!/[\u0080-\uffff]/.test(file.text)) expect(bytes, file.path).toBe(text);
      fromText += text;
      fromBytes += bytes;
    }
    expect(Math.abs(fromBytes / fromText - 1)).toBeLessThan(0.01);
    expect(estimateTokensFromBytes(new Uint8Array())).toBe(0);
    expect(estimateTokensFromBytes(encoder.encode('😀 日本 é'))).toBe(estimateTokens('😀 日本 é'));
  });
});
