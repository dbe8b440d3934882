import { describe, expect, it } from 'vitest';
import { isResultFileName } from '../src/index.js';

describe('the file names a result folder may hold', () => {
  it('takes the outputs, their parts and a spliced output’s description and pieces', () => {
    for (const name of [
      'output.txt',
      'output.zip',
      'summary.json',
      'output.part-01.md',
      'output.json.splice',
      'output.md.piece-0',
      'output.txt.piece-15',
    ])
      expect(isResultFileName(name), name).toBe(true);
  });

  it('refuses anything else, near misses included', () => {
    for (const name of [
      'output.zip.splice',
      'output.zip.piece-0',
      'output.txt.piece-01',
      'output.txt.piece-',
      'output.txt.piece-1234567',
      'output.txt.splice.tmp',
      '../output.txt',
      'carry.json',
      42,
    ])
      expect(isResultFileName(name), String(name)).toBe(false);
  });
});
