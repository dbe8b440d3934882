// Compressed code in a scan and a preview: code files in a language it knows are transformed on the
// file threads, other files pass through, token counts are of the transformed text, and a file it
// cannot transform (too large, too slow, a syntax error) is kept as it is and listed.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transformCode } from '../../src/compress/compress-code.js';
import { COMPRESS_MAX_BYTES, COMPRESS_TIMEOUT_MS, ELISION } from '../../src/compress/code-transform.js';
import type { CodeTransform } from '../../src/compress/code-transform.js';
import { createEngine } from '../../src/engine/engine.js';
import type { ScanInput, ScanReport } from '../../src/scan/run-scan.js';
import { createTokenCounter } from '../../src/tokens/index.js';
import { estimateTokensFromBytes } from '../../src/tokens/estimate-tokens.js';
import { DEFAULT_ENGINE_LIMITS, DEFAULT_SCAN_OPTIONS } from '../../src/types.js';
import type { EngineLimits, ScanOptions } from '../../src/types.js';
import { makeTree } from '../secrets/secret-fixture.js';

const SIGNATURES: CodeTransform = {
  signatures: true,
  removeComments: false,
  maxBytes: COMPRESS_MAX_BYTES,
  timeoutMs: COMPRESS_TIMEOUT_MS,
};
const text = (bytes: Uint8Array | undefined): string => Buffer.from(bytes ?? []).toString('utf8');
const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);

/** About 600 kB of JavaScript: long enough that parsing it takes far more than a millisecond. */
function bigSource(): string {
  const lines: string[] = [];
  for (let i = 0; i < 12_000; i++) lines.push(`function f${i}(a, b) { const c = a + b * ${i}; return c; }`);
  return lines.join('\n');
}

describe('transformCode fallbacks', () => {
  it('keeps a file over the size cap as it is', async () => {
    const source = utf8('function f() { return 1; }\n');
    const outcomes = await transformCode([source], ['javascript'], { ...SIGNATURES, maxBytes: source.length - 1 });
    expect(outcomes).toEqual([{ result: 'too_large' }]);
  });

  it('cancels a parse that runs past the time cap, and the next file parses as usual', async () => {
    const outcomes = await transformCode(
      [utf8(bigSource()), utf8('function g() { return 2; }\n')],
      ['javascript', 'javascript'],
      { ...SIGNATURES, timeoutMs: 1 },
    );
    expect(outcomes[0]).toEqual({ result: 'timeout' });
    // The second file's own cap (1 ms) may or may not hold on a loaded machine; a third with room must pass.
    const [after] = await transformCode([utf8('function g() { return 2; }\n')], ['javascript'], SIGNATURES);
    expect(text(after?.result === 'transformed' ? after.content : undefined)).toBe(`function g() { ${ELISION} }\n`);
  });

  it('cancels a parse past its budget of parser steps whatever the time, the same way every time', async () => {
    const source = utf8(bigSource());
    const tight = { ...SIGNATURES, parseStepsPerKib: 0, timeoutMs: 60_000 };
    expect(await transformCode([source], ['javascript'], tight)).toEqual([{ result: 'timeout' }]);
    expect(await transformCode([source], ['javascript'], tight)).toEqual([{ result: 'timeout' }]);
    // The default budget leaves room for the same text.
    const [outcome] = await transformCode([source], ['javascript'], { ...SIGNATURES, timeoutMs: 60_000 });
    expect(outcome?.result).toBe('transformed');
  });

  it('keeps a file with a syntax error as it is', async () => {
    const outcomes = await transformCode(
      [utf8('function f( { return 1; }\n'), utf8('def f(:\n    pass\n')],
      ['javascript', 'python'],
      SIGNATURES,
    );
    expect(outcomes).toEqual([{ result: 'parse_error' }, { result: 'parse_error' }]);
  });

  it('reads a C++ header named .h as C++ when it is not C', async () => {
    const [outcome] = await transformCode(
      [utf8('class A {\n public:\n  int f() { return 1; }\n};\n')],
      ['c'],
      SIGNATURES,
    );
    expect(text(outcome?.result === 'transformed' ? outcome.content : undefined)).toContain(`int f() { ${ELISION} }`);
  });

  it('answers a text with nothing to elide without new bytes', async () => {
    expect(await transformCode([utf8('const a = 1;\n')], ['typescript'], SIGNATURES)).toEqual([
      { result: 'transformed' },
    ]);
  });
});

describe('remove_comments', () => {
  const removeComments: CodeTransform = { ...SIGNATURES, signatures: false, removeComments: true };
  const strip = async (source: string, language: 'javascript' | 'python' | 'go'): Promise<string> => {
    const [outcome] = await transformCode([utf8(source)], [language], removeComments);
    if (outcome?.result !== 'transformed') throw new Error(`not transformed: ${outcome?.result}`);
    return outcome.content ? text(outcome.content) : source;
  };

  it('removes every comment, doc comments too, and keeps what only looks like one', async () => {
    expect(
      await strip(
        [
          '/** Doc. */',
          'const url = "http://example.com/*x*/"; // trailing',
          'const re = /\\/\\/ not a comment/;',
          '',
          '/* block',
          '   over lines */',
          'call(a, /* inline */ b);',
          '',
        ].join('\n'),
        'javascript',
      ),
    ).toBe(
      ['const url = "http://example.com/*x*/";', 'const re = /\\/\\/ not a comment/;', '', 'call(a, b);', ''].join(
        '\n',
      ),
    );
  });

  it('keeps a shebang and removes Python docstrings and comments', async () => {
    expect(await strip('#!/usr/bin/env python3\n"""Doc."""\n# note\nx = "# kept"  # gone\n', 'python')).toBe(
      '#!/usr/bin/env python3\nx = "# kept"\n',
    );
  });

  it('keeps doc comments with compress: signatures', async () => {
    const [outcome] = await transformCode(
      [
        utf8(
          '// Add adds.\nfunc Add(a, b int) int {\n\t// sum\n\treturn a + b\n}\n\n// loose note\n\nvar x = 1 // trailing\n',
        ),
      ],
      ['go'],
      { ...SIGNATURES, removeComments: true },
    );
    expect(text(outcome?.result === 'transformed' ? outcome.content : undefined)).toBe(
      `// Add adds.\nfunc Add(a, b int) int { ${ELISION} }\n\n\nvar x = 1\n`,
    );
  });
});

describe('a scan with compress: signatures', () => {
  const engine = createEngine({ tokenThreads: 1 });
  const counter = createTokenCounter('o200k_base');
  const files = {
    'src/app.ts':
      '/** Adds. */\nexport function add(a: number, b: number): number {\n  const sum = a + b;\n  return sum;\n}\n',
    'src/tool.py': 'def run(argv):\n    """Runs."""\n    for a in argv:\n        print(a)\n',
    'src/broken.js': 'function f( {\n  return 1;\n}\n',
    'src/big.go': `package big\n\nfunc F() int {\n${'\treturn 1\n'.repeat(50)}}\n`,
    'README.md': '# App\n\nfunction notCode() { return 1; }\n',
  };
  let tree: Awaited<ReturnType<typeof makeTree>>;
  let report: ScanReport;
  let output: string;
  const limits: EngineLimits = { ...DEFAULT_ENGINE_LIMITS, compressMaxBytes: 400 };

  const input = (outDir: string, options: Partial<ScanOptions>): ScanInput => ({
    root: tree.root,
    repoName: 'app',
    source: { type: 'local', url: null, hostFamily: null, ref: null, branch: null, commit: null, subdir: null },
    options: { ...DEFAULT_SCAN_OPTIONS, ...options },
    limits,
    encoding: 'o200k_base',
    outDir,
  });

  beforeAll(async () => {
    tree = await makeTree(files);
    report = await engine.runScan(input(tree.outDir, { compress: 'signatures' }));
    output = await readFile(join(tree.outDir, 'output.txt'), 'utf8');
  });
  afterAll(async () => {
    await tree.cleanup();
    await engine.close();
  });

  it('writes the compressed code, and other files as they are', () => {
    expect(output).toContain(`/** Adds. */\nexport function add(a: number, b: number): number { ${ELISION} }\n`);
    expect(output).toContain(`def run(argv):\n    """Runs."""\n    ${ELISION}\n`);
    expect(output).toContain(files['src/broken.js']);
    expect(output).toContain(files['src/big.go']);
    expect(output).toContain(files['README.md']);
    expect(output).not.toContain('const sum');
  });

  it('counts the compressed text, and says what it was before', () => {
    const ts = report.files.find((f) => f.path === 'src/app.ts');
    const compressed = `/** Adds. */\nexport function add(a: number, b: number): number { ${ELISION} }\n`;
    expect(ts?.tokens).toBe(counter.count(compressed));
    expect(ts?.compression).toEqual({ result: 'compressed', tokens_before: counter.count(files['src/app.ts']) });
    expect(report.files.find((f) => f.path === 'README.md')?.compression).toBeUndefined();
  });

  it('lists the files kept as they are, with totals over the compressed ones', () => {
    expect(report.compression?.not_compressed).toEqual([
      { path: 'src/big.go', reason: 'too_large' },
      { path: 'src/broken.js', reason: 'parse_error' },
    ]);
    const compressed = report.files.filter((f) => f.compression?.result === 'compressed');
    expect(compressed.map((f) => f.path)).toEqual(['src/app.ts', 'src/tool.py']);
    expect(report.compression).toMatchObject({
      compress: 'signatures',
      remove_comments: false,
      files: 2,
      tokens_before: compressed.reduce((sum, f) => sum + (f.compression?.tokens_before ?? 0), 0),
      tokens_after: compressed.reduce((sum, f) => sum + f.tokens, 0),
    });
    expect(report.compression?.tokens_after).toBeLessThan(report.compression?.tokens_before ?? 0);
  });

  it('leaves a scan with neither option untransformed, without a compression block, never asking for a transform', async () => {
    const outDir = join(tree.outDir, 'plain');
    await import('node:fs/promises').then((fs) => fs.mkdir(outDir));
    // Never asked to transform anything: the file thread imports the parser only when asked.
    const plain = await engine.runScan(input(outDir, {}), {
      transformCode: () => Promise.reject(new Error('a scan with neither option asked for a transform')),
    });
    expect(plain.compression).toBeUndefined();
    expect(plain.files.some((f) => 'compression' in f)).toBe(false);
    expect(await readFile(join(outDir, 'output.txt'), 'utf8')).toContain(files['src/app.ts']);
  });

  it('estimates the tokens after compression in a preview', async () => {
    const preview = await engine.inspect({ ...input(tree.outDir, { compress: 'signatures' }) });
    expect(preview.compression?.files).toBe(2);
    expect(preview.compression?.tokens_after).toBeLessThan(preview.compression?.tokens_before ?? 0);
    const ts = preview.files.find((f) => f.path === 'src/app.ts');
    const compressed = `/** Adds. */\nexport function add(a: number, b: number): number { ${ELISION} }\n`;
    expect(ts?.tokens_estimate).toBe(estimateTokensFromBytes(utf8(compressed)));
  });
});
