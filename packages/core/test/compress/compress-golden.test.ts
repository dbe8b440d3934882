import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { transformCode } from '../../src/compress/compress-code.js';
import {
  CODE_LANGUAGES,
  COMPRESS_MAX_BYTES,
  COMPRESS_TIMEOUT_MS,
  codeLanguageOf,
} from '../../src/compress/code-transform.js';
import type { CodeTransform } from '../../src/compress/code-transform.js';

// Regenerate after an intended change: UPDATE_GOLDEN=1 npx vitest run packages/core/test/compress/compress-golden.test.ts
const UPDATE = process.env.UPDATE_GOLDEN === '1';
const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'compress');
const EXPECTED = join(FIXTURES, 'expected');

const VARIANTS: Record<string, Omit<CodeTransform, 'maxBytes' | 'timeoutMs'>> = {
  signatures: { signatures: true, removeComments: false },
  'remove-comments': { signatures: false, removeComments: true },
  'signatures+remove-comments': { signatures: true, removeComments: true },
};

const samples = (await readdir(FIXTURES)).filter((name) => /^sample\./i.test(name)).sort();

describe('compressed code, golden outputs per language', () => {
  it('has a sample of every language it knows', () => {
    const languages = new Set(samples.map((name) => codeLanguageOf(name)));
    for (const language of CODE_LANGUAGES) expect(languages, language).toContain(language);
  });

  describe.each(Object.entries(VARIANTS))('%s', (variant, settings) => {
    it.each(samples)('%s', async (name) => {
      const source = await readFile(join(FIXTURES, name));
      const language = codeLanguageOf(name);
      if (language === null) throw new Error(`${name}: no language`);
      const [outcome] = await transformCode([source], [language], {
        ...settings,
        maxBytes: COMPRESS_MAX_BYTES,
        timeoutMs: COMPRESS_TIMEOUT_MS,
      });
      expect(outcome?.result).toBe('transformed');
      const actual = outcome?.result === 'transformed' && outcome.content ? outcome.content : source;
      const golden = join(EXPECTED, `${name}.${variant}`);
      if (UPDATE) {
        await mkdir(EXPECTED, { recursive: true });
        await writeFile(golden, actual);
      }
      expect(Buffer.from(actual).toString('utf8')).toBe(await readFile(golden, 'utf8'));
      // Something was taken out of every sample.
      expect(actual.length).toBeLessThan(source.length);
    });
  });
});
