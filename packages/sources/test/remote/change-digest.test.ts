// Change digests (`base_ref`) over real git: a repository with one change of each kind (added,
// modified, renamed, deleted, binary) served on loopback, cloned, diffed by git and rendered by the
// engine. The outputs are compared byte for byte with golden files (commit ids are fixed by the
// fixture's dates). Regenerate after an intended format change:
//   UPDATE_GOLDEN=1 npx vitest run packages/sources/test/remote/change-digest.test.ts
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { isUtf8 } from 'node:buffer';
import { createHash } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ScanError } from '@reposcan/contracts';
import { createTokenCounter, DEFAULT_ENGINE_LIMITS, DEFAULT_SCAN_OPTIONS, runScan } from '@reposcan/core';
import type { ScanOptions, ScanReport } from '@reposcan/core';
import { prepareSource } from '../../src/prepare-source.js';
import type { PreparedSource } from '../../src/prepare-source.js';
import {
  addIgnoreFixture,
  addLargeChangeFixture,
  BIG_FILE_LINES,
  createChangeFixture,
  FAKE_GITHUB_TOKEN,
} from './helpers/change-fixture.js';
import type { ChangeFixture } from './helpers/change-fixture.js';
import { startGitHttpServer } from './helpers/git-http-server.js';
import type { GitHttpServer } from './helpers/git-http-server.js';
import { loopbackSourceSettings } from './helpers/loopback-settings.js';

const UPDATE = process.env.UPDATE_GOLDEN === '1';
const GOLDEN = path.join(import.meta.dirname, 'fixtures', 'golden', 'change-digest');

const counter = createTokenCounter('o200k_base');
const countInThread = (contents: Uint8Array[]): Promise<number[]> =>
  Promise.resolve(contents.map((c) => counter.countUtf8(c)));

let fixture: ChangeFixture;
let server: GitHttpServer;
let work: string;

beforeAll(async () => {
  fixture = createChangeFixture();
  server = await startGitHttpServer(fixture.projectRoot);
  work = mkdtempSync(path.join(os.tmpdir(), 'reposcan-change-digest-'));
});

afterAll(async () => {
  await server.close();
  fixture.cleanup();
  rmSync(work, { recursive: true, force: true });
});

let runs = 0;

async function digest(
  baseRef: string,
  options: Partial<ScanOptions> = {},
  url = `${server.origin}/acme/changes.git`,
  countTokens = countInThread,
): Promise<{ prepared: PreparedSource; report: ScanReport; outDir: string }> {
  const dir = path.join(work, String(++runs));
  const srcDir = path.join(dir, 'src');
  const outDir = path.join(dir, 'out');
  mkdirSync(srcDir, { recursive: true });
  mkdirSync(outDir, { recursive: true });
  const prepared = await prepareSource(
    { type: 'remote', repo_path: url, branch: 'main' },
    {
      workDir: srcDir,
      uploadPath: null,
      settings: loopbackSourceSettings(),
      signal: new AbortController().signal,
      onPhase: () => {},
      baseRef,
    },
  );
  const report = await runScan(
    {
      root: prepared.root,
      repoName: prepared.repoName,
      source: prepared.source,
      ...(prepared.sourceSkips ? { sourceSkips: prepared.sourceSkips } : {}),
      ...(prepared.git ? { git: prepared.git } : {}),
      ...(prepared.changes ? { changes: prepared.changes } : {}),
      ...(prepared.absent ? { absent: prepared.absent } : {}),
      options: { ...DEFAULT_SCAN_OPTIONS, ...options },
      limits: DEFAULT_ENGINE_LIMITS,
      encoding: 'o200k_base',
      outDir,
    },
    { countTokens },
  );
  return { prepared, report, outDir };
}

/** The abbreviated blob id git's `index` line shows for a text. */
function gitBlobPrefix(text: string): string {
  const bytes = Buffer.from(text);
  return createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex').slice(0, 7);
}

/** The outputs name the loopback server's port, which changes from run to run. */
function stable(text: string): string {
  return text.replaceAll(server.origin, 'http://git.test');
}

describe('change digest of a remote repository (loopback git server)', () => {
  let run: Awaited<ReturnType<typeof digest>>;
  beforeAll(async () => {
    run = await digest('v1');
  });

  it('lists each kind of change, with the two commits, in the summary', () => {
    const { report } = run;
    expect(report.changes).toMatchObject({
      base_ref: 'v1',
      base_commit: fixture.base,
      head_commit: fixture.head,
      counts: { added: 2, modified: 2, renamed: 1, deleted: 2, binary: 1 },
    });
    expect(report.changes?.files.map((f) => [f.status, f.path, f.old_path, f.binary])).toEqual([
      ['modified', 'assets/logo.bin', null, true],
      ['deleted', 'config/secrets.env', null, false],
      ['deleted', 'docs/gone.md', null, false],
      ['added', 'docs/new.md', null, false],
      ['added', 'src/added.ts', null, false],
      ['modified', 'src/app.ts', null, false],
      ['renamed', 'src/new-name.ts', 'src/old-name.ts', false],
    ]);
    // Only changed files: the untouched one is neither read nor drawn, nor even fetched.
    expect(report.files.map((f) => f.path)).not.toContain('untouched.txt');
    expect(report.tree).not.toContain('untouched.txt');
    expect(existsSync(path.join(run.prepared.root, 'untouched.txt'))).toBe(false);
    expect(existsSync(path.join(run.prepared.root, 'README.md'))).toBe(false);
    expect(readFileSync(path.join(run.prepared.root, 'src', 'app.ts'), 'utf8')).toContain('export const added = true;');
  });

  it.each(['txt', 'md', 'json'] as const)('output.%s is byte-identical to the golden file', (format) => {
    const actual = stable(readFileSync(path.join(run.outDir, `output.${format}`), 'utf8'));
    const golden = path.join(GOLDEN, `output.${format}`);
    if (UPDATE) {
      mkdirSync(GOLDEN, { recursive: true });
      writeFileSync(golden, actual);
    }
    expect(actual).toBe(readFileSync(golden, 'utf8'));
  });

  it("counts each file's tokens exactly: its diff and its new text as the outputs hold them", () => {
    const json = JSON.parse(readFileSync(path.join(run.outDir, 'output.json'), 'utf8')) as {
      files: Array<{ path: string; tokens?: number; diff: string | null; content: string | null; binary: boolean }>;
    };
    for (const file of json.files) {
      if (file.binary) {
        expect(file.diff).toBeNull();
        expect(file.content).toBeNull();
        continue;
      }
      expect(file.tokens).toBe(counter.count(file.diff ?? '') + counter.count(file.content ?? ''));
    }
    const total = run.report.files.reduce((sum, f) => sum + f.tokens, 0);
    expect(run.report.summary.tokens).toBe(total);
  });

  it('redacts secrets in the diffs as in the texts: old lines, new lines and deleted files alike', () => {
    for (const format of ['txt', 'md', 'json'])
      expect(readFileSync(path.join(run.outDir, `output.${format}`), 'utf8')).not.toContain(FAKE_GITHUB_TOKEN);
    const findings = run.report.secrets?.findings.map((f) => [f.path, f.in ?? 'text']);
    expect(findings).toEqual(
      expect.arrayContaining([
        ['src/added.ts', 'text'],
        ['src/added.ts', 'diff'],
        ['config/secrets.env', 'diff'],
      ]),
    );
  });

  it('keeps only the changed files the scan options keep, deleted ones included', async () => {
    const { report } = await digest('v1', { excludePatterns: ['*.md'], includePatterns: [] });
    expect(report.changes?.files.map((f) => f.path)).toEqual([
      'assets/logo.bin',
      'config/secrets.env',
      'src/added.ts',
      'src/app.ts',
      'src/new-name.ts',
    ]);
    const docsOnly = await digest('v1', { docsOnly: true });
    expect(docsOnly.report.changes?.files.map((f) => [f.status, f.path])).toEqual([
      ['deleted', 'docs/gone.md'],
      ['added', 'docs/new.md'],
    ]);
  });

  it('applies ignore files of folders the change did not touch', async () => {
    const { base, head } = addIgnoreFixture(fixture.projectRoot);
    const { report, prepared } = await digest(base, {}, `${server.origin}/acme/ignores.git`);
    expect(report.changes).toMatchObject({ base_commit: base, head_commit: head });
    expect(report.changes?.files.map((f) => [f.status, f.path])).toEqual([
      ['added', 'notes/todo.md'],
      ['modified', 'src/app.ts'],
    ]);
    expect(report.skipped.map((s) => s.path)).toEqual(['src/types.gen.ts']);
    expect(readFileSync(path.join(prepared.root, 'src', '.gittxtignore'), 'utf8')).toBe('*.gen.ts\n');
    expect(existsSync(path.join(prepared.root, 'README.md'))).toBe(false);
  });

  it("reads a patch larger than a read of git's output whole, and the ones after it in place", async () => {
    const { base } = addLargeChangeFixture(fixture.projectRoot);
    const diffMemory = new Map<string, ArrayBufferLike>();
    const { report, outDir } = await digest(base, {}, `${server.origin}/acme/large-change.git`, (contents) => {
      for (const content of contents) {
        const head = /^diff --git a\/(\S+)/.exec(
          Buffer.from(content.buffer, content.byteOffset, 64).toString('latin1'),
        );
        if (head) diffMemory.set(head[1] as string, content.buffer);
      }
      return countInThread(contents);
    });
    const json = JSON.parse(readFileSync(path.join(outDir, 'output.json'), 'utf8')) as {
      files: Array<{ path: string; tokens: number; diff: string; content: string }>;
    };
    const byPath = new Map(json.files.map((f) => [f.path, f]));
    expect([...byPath.keys()]).toEqual(['big.txt', 'bom.txt', 'legacy.txt', 'zz/after-1.ts', 'zz/after-2.ts']);
    const big = byPath.get('big.txt');
    expect(big?.diff).toBe(
      `diff --git a/big.txt b/big.txt\nnew file mode 100644\nindex 0000000..${gitBlobPrefix(BIG_FILE_LINES.join(''))}\n` +
        `--- /dev/null\n+++ b/big.txt\n@@ -0,0 +1,${BIG_FILE_LINES.length} @@\n${BIG_FILE_LINES.map((l) => `+${l}`).join('')}`,
    );
    expect(big?.content).toBe(BIG_FILE_LINES.join(''));
    // git's diff holds the file's own bytes; invalid UTF-8 is replaced as in every text of the outputs.
    const txt = readFileSync(path.join(outDir, 'output.txt'));
    expect(isUtf8(txt)).toBe(true);
    expect(txt.includes('\n+caf\uFFFD au lait\n')).toBe(true);
    expect(byPath.get('legacy.txt')?.diff).toContain('\n+caf\uFFFD au lait\n');
    expect(byPath.get('legacy.txt')?.content).toBe('café au lait\n');
    // The text as the scan's outputs hold it: a UTF-8 byte order mark stays.
    expect(byPath.get('bom.txt')?.content).toBe('\ufeffmarked\n');
    for (const [name, value] of [
      ['zz/after-1.ts', 1],
      ['zz/after-2.ts', 2],
    ] as const) {
      expect(byPath.get(name)?.diff).toMatch(
        new RegExp(`^diff --git a/${name} b/${name}\n[^]*\n\\+export const after = ${value};\n$`),
      );
    }
    for (const file of json.files) expect(file.tokens).toBe(counter.count(file.diff) + counter.count(file.content));
    expect(report.secrets?.not_checked).toEqual(['big.txt']);
    // The texts waited in a spool of the output folder while the outputs were written: gone now.
    expect(readdirSync(outDir).sort()).toEqual(['output.json', 'output.md', 'output.txt']);
    // The counting threads were handed views of one reused shared buffer (sized at once for the
    // large patch, which comes first), not a fresh copy of each batch: copies piled up in the
    // threads until they collected.
    // (A diff of invalid UTF-8 is replaced, in memory of its own.)
    expect([...diffMemory.keys()].sort()).toEqual([...byPath.keys()]);
    const shared = [...diffMemory].filter(([name]) => name !== 'legacy.txt').map(([, memory]) => memory);
    expect(shared.every((memory) => memory instanceof SharedArrayBuffer)).toBe(true);
    expect(new Set(shared).size).toBe(1);
  });

  it('diffs only the folder a folder URL names', async () => {
    const { report } = await digest('v1', {}, `${server.origin}/acme/changes/tree/main/src`);
    expect(report.changes?.files.map((f) => f.path)).toEqual(['src/added.ts', 'src/app.ts', 'src/new-name.ts']);
  });

  it('takes a full commit id as the base, and a branch as the base of itself gives an empty digest', async () => {
    const byCommit = await digest(fixture.base);
    expect(byCommit.report.changes?.base_commit).toBe(fixture.base);
    expect(byCommit.report.changes?.counts).toEqual(run.report.changes?.counts);
    const same = await digest('main');
    expect(same.report.changes?.files).toEqual([]);
    expect(same.report.files).toEqual([]);
    expect(readFileSync(path.join(same.outDir, 'output.md'), 'utf8')).toContain('_No changed textual files._');
  });

  it('refuses a base ref the repository does not have with BASE_REF_NOT_FOUND', async () => {
    for (const missing of ['no-such-branch', 'f'.repeat(40)]) {
      const error = (await digest(missing).catch((e: unknown) => e)) as ScanError;
      expect(error.code).toBe('BASE_REF_NOT_FOUND');
      expect(error.message).toContain(missing);
    }
  });
});
