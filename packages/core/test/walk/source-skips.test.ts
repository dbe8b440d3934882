// A remote clone checks links out as small text files and submodules as empty folders; the
// source names them (WalkInput.sourceSkips) and the walk skips them as it skips real links.
import { describe, expect, it } from 'vitest';
import { IoThreads } from '../../src/io/io-threads.js';
import { DEFAULT_ENGINE_LIMITS } from '../../src/types.js';
import type { SkippedPath, SkipReason, WalkedFile } from '../../src/types.js';
import { walkTree } from '../../src/walk/index.js';
import type { WalkInput } from '../../src/walk/index.js';
import { defaultOptions, useTempTrees } from './walk-fixture.js';

const tree = useTempTrees();

/** What git writes for links and submodules with core.symlinks=false. */
const CLONE = {
  'README.md': '# repo\n',
  leak: '/etc/passwd',
  'docs/up': '../..',
  'docs/guide.md': '# guide\n',
  'lib/.gitignore': '../../shared/ignore',
  'lib/index.ts': 'export {};\n',
  'vendor/sub/': null,
};
const SKIPS = new Map<string, SkipReason>([
  ['leak', 'symlink'],
  ['docs/up', 'symlink'],
  ['lib/.gitignore', 'symlink'],
  ['vendor/sub', 'submodule'],
]);

function input(root: string, extra: Partial<WalkInput> = {}): WalkInput {
  return { root, subdir: null, options: defaultOptions(), limits: DEFAULT_ENGINE_LIMITS, sourceSkips: SKIPS, ...extra };
}

describe('paths the source says are links or submodules', () => {
  it('are skipped as symlink and submodule, in a walk here and on an io thread alike', async () => {
    const root = await tree(CLONE);
    const expected: SkippedPath[] = [
      { path: 'docs/up', reason: 'symlink' },
      { path: 'leak', reason: 'symlink' },
      { path: 'lib/.gitignore', reason: 'symlink' },
      { path: 'vendor/sub/', reason: 'submodule' },
    ];
    const here = await walkTree(input(root));
    expect(here.files.map((f) => f.path)).toEqual(['docs/guide.md', 'lib/index.ts', 'README.md']);
    expect(here.skipped).toEqual(expected);

    const files: WalkedFile[] = [];
    const io = new IoThreads();
    const skipped = await io.walk(input(root), (chunk) => files.push(...chunk)).finally(() => io.close());
    expect(files.map((f) => f.path)).toEqual(['docs/guide.md', 'lib/index.ts', 'README.md']);
    expect(skipped).toEqual(expected);
  });

  it('without them the same tree scans the link texts as files', async () => {
    const root = await tree(CLONE);
    const result = await walkTree(input(root, { sourceSkips: undefined }));
    expect(result.files.map((f) => f.path)).toContain('leak');
    expect(result.skipped).toEqual([]);
  });

  it("never reads a linked ignore file's text as rules", async () => {
    // As a rule, the text `*.ts` would ignore lib/index.ts.
    const root = await tree({ ...CLONE, 'lib/.gitignore': '*.ts' });
    const result = await walkTree(input(root));
    expect(result.files.map((f) => f.path)).toContain('lib/index.ts');
  });

  it("are reported for the user's own filters first, as a real link is", async () => {
    const root = await tree({ ...CLONE, '.gitignore': 'leak\nvendor/\n' });
    const ignored = await walkTree(input(root));
    expect(ignored.skipped).toContainEqual({ path: 'leak', reason: 'ignored' });
    expect(ignored.skipped).toContainEqual({ path: 'vendor/', reason: 'ignored' });

    const docs = await walkTree(input(await tree(CLONE), { docsOnly: true }));
    expect(docs.skipped).toContainEqual({ path: 'leak', reason: 'pattern' });
    expect(docs.skipped).toContainEqual({ path: 'vendor/sub/', reason: 'submodule' });
  });

  it('apply inside a subdir scan, keeping repository-relative paths', async () => {
    // A linked ignore file above the subdir is not applied either.
    const root = await tree({ ...CLONE, '.gitignore': '*.md' });
    const result = await walkTree(
      input(root, { subdir: 'docs', sourceSkips: new Map([...SKIPS, ['.gitignore', 'symlink']]) }),
    );
    expect(result.files.map((f) => f.path)).toEqual(['docs/guide.md']);
    expect(result.skipped).toEqual([{ path: 'docs/up', reason: 'symlink' }]);
  });
});
