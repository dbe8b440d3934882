import { describe, expect, it } from 'vitest';
import { languageHint } from '../../src/render/language-hint.js';

describe('languageHint', () => {
  it.each([
    ['Dockerfile', 'dockerfile'],
    ['docker/Dockerfile.dev', 'dockerfile'],
    ['Containerfile', 'dockerfile'],
    ['build/Containerfile.prod', 'dockerfile'],
    ['GNUmakefile', 'makefile'],
    ['src/a.ts', 'ts'],
    ['Containerfiles', ''],
    ['notes', ''],
  ])('%s → %j', (path, hint) => {
    expect(languageHint(path)).toBe(hint);
  });
});
