import { describe, expect, it } from 'vitest';
import { formatSize, formatTokens } from '../../src/render/human-format.js';

describe('formatSize (decimal units, one decimal)', () => {
  it.each([
    [0, '0 Bytes'],
    [37, '37 Bytes'],
    [999, '999 Bytes'],
    [1000, '1.0 kB'],
    [28_100, '28.1 kB'],
    [999_949, '999.9 kB'],
    [999_950, '1.0 MB'],
    [3_400_000, '3.4 MB'],
    [12_345_678_901, '12.3 GB'],
  ])('%i bytes → %s', (bytes, text) => {
    expect(formatSize(bytes)).toBe(text);
  });
});

describe('formatTokens (abbreviated)', () => {
  it.each([
    [0, '0'],
    [999, '999'],
    [1000, '1.0k'],
    [3049, '3.0k'],
    [999_949, '999.9k'],
    [999_950, '1.0M'],
    [1_234_567, '1.2M'],
    [2_500_000_000, '2.5B'],
  ])('%i → %s', (tokens, text) => {
    expect(formatTokens(tokens)).toBe(text);
  });
});
