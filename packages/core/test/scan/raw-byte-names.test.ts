// Names that are not UTF-8 (a Latin-1 `é` is the byte 0xE9): scanned like any other, and shown
// in every output, the ZIP bundle's entry names too, in the one quoted form of path-bytes.ts.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runScan } from '../../src/scan/run-scan.js';
import { DEFAULT_ENGINE_LIMITS, DEFAULT_SCAN_OPTIONS } from '../../src/types.js';
import type { ScanReport } from '../../src/scan/run-scan.js';
import { takesRawNames, writeTree } from '../walk/walk-fixture.js';
import { LOCAL_SOURCE } from './fixture-tree.js';
import { readZip } from './read-zip.js';

const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');

describe.skipIf(!takesRawNames)('names that are not UTF-8', () => {
  let base = '';
  let outDir = '';
  let report: ScanReport;
  beforeAll(async () => {
    base = await mkdtemp(join(tmpdir(), 'reposcan-raw-names-'));
    const root = join(base, 'repo');
    outDir = join(base, 'out');
    await mkdir(outDir);
    // Carried as path-bytes.ts carries them: \udce9 is the byte 0xE9, \udce0 the byte 0xE0.
    await writeTree(root, {
      'caf\udce9.txt': 'latin-1 file\n',
      'caf\udce9.log': 'ignored\n',
      '.gitignore': 'caf?.log\n',
      'd\udce9j\udce0/inside.md': '# inside\n',
      'd\udce9j\udce0/pic.png': '',
      'caf\udce9.png': '',
      'caf\udce9.md': '# notes\n',
      '"quoted.txt': 'a real name that starts with a quote\n',
      'plain.txt': 'plain\n',
    });
    await writeFile(Buffer.from(`${root}/d\xe9j\xe0/pic.png`, 'latin1'), PNG);
    await writeFile(Buffer.from(`${root}/caf\xe9.png`, 'latin1'), PNG);
    report = await runScan(
      {
        root,
        repoName: 'repo',
        source: LOCAL_SOURCE,
        options: { ...DEFAULT_SCAN_OPTIONS, syncIgnore: true, createZip: true },
        limits: DEFAULT_ENGINE_LIMITS,
        encoding: 'o200k_base',
        outDir,
      },
      { countTokens: (contents) => Promise.resolve(contents.map((c) => c.byteLength)) },
    );
  });
  afterAll(async () => {
    await rm(base, { recursive: true, force: true });
  });

  it('are scanned, each name shown quoted with its bytes in hex', () => {
    expect(report.files.map((f) => f.path).sort()).toEqual(
      ['"%22quoted.txt"', '"caf%E9.md"', '"caf%E9.txt"', '"d%E9j%E0"/inside.md', '.gitignore', 'plain.txt'].sort(),
    );
    expect(report.files.find((f) => f.path === '"caf%E9.md"')?.subcategory).toBe('docs');
    // Classified by the name's own extension, not the quoted form's `.png"`.
    expect(report.assets.map((a) => [a.path, a.subcategory]).sort()).toEqual([
      ['"caf%E9.png"', 'image'],
      ['"d%E9j%E0"/pic.png', 'image'],
    ]);
    expect(report.skipped).toContainEqual({ path: '"caf%E9.log"', reason: 'ignored' });
  });

  it('appear with their content in the text outputs and the tree', async () => {
    const txt = await readFile(join(outDir, 'output.txt'), 'utf8');
    const md = await readFile(join(outDir, 'output.md'), 'utf8');
    for (const text of [txt, md]) {
      expect(text).toContain('"caf%E9.txt"');
      expect(text).toContain('latin-1 file');
      expect(text).toContain('"d%E9j%E0"');
      expect(text).toContain('# inside');
      expect(text).toContain('"%22quoted.txt"');
      expect(text).not.toContain('\ufffd');
    }
    // The fence's language comes from the name's own extension.
    expect(md).toContain('```markdown\n# notes');
    const json = JSON.parse(await readFile(join(outDir, 'output.json'), 'utf8')) as {
      files: { path: string; content: string }[];
    };
    expect(json.files.find((f) => f.path === '"caf%E9.txt"')?.content).toBe('latin-1 file\n');
    expect(json.files.find((f) => f.path === '"d%E9j%E0"/inside.md')?.content).toBe('# inside\n');
  });

  it('carry the quoted form into the ZIP bundle, with the bytes of the file', async () => {
    const entries = await readZip(join(outDir, 'output.zip'));
    expect(entries.get('repository/"d%E9j%E0"/pic.png')).toEqual(PNG);
    expect(entries.get('repository/"caf%E9.png"')).toEqual(PNG);
    const summary = JSON.parse((entries.get('summary.json') as Buffer).toString('utf8')) as {
      skipped: { path: string }[];
    };
    expect(summary.skipped.map((s) => s.path)).toContain('"caf%E9.log"');
  });
});
