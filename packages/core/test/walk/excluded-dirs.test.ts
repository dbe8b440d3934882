import { describe, expect, it } from 'vitest';
import { DEFAULT_EXCLUDED_DIRS } from '../../src/walk/index.js';
import { useTempTrees, walk } from './walk-fixture.js';

const tree = useTempTrees();

describe('default excluded folders', () => {
  it.each(DEFAULT_EXCLUDED_DIRS)('prunes %s at the top and at depth, recording each once', async (name) => {
    const root = await tree({
      'main.py': 'x',
      [`${name}/inside.txt`]: 'x',
      [`${name}/deeper/more.txt`]: 'x',
      [`pkg/${name}/inside.txt`]: 'x',
      'pkg/mod.py': 'x',
    });
    const result = await walk(root);
    expect(result.paths).toEqual(['pkg/mod.py', 'main.py']);
    expect(result.reasons).toEqual({ [`${name}/`]: 'excluded_dir', [`pkg/${name}/`]: 'excluded_dir' });
  });

  it('lists the expected names', () => {
    expect([...DEFAULT_EXCLUDED_DIRS].sort()).toEqual(
      [
        '.git',
        '.hg',
        '.svn',
        '.bzr',
        'node_modules',
        'bower_components',
        '.venv',
        'venv',
        '__pycache__',
        '.mypy_cache',
        '.pytest_cache',
        '.ruff_cache',
        '.tox',
        '.gradle',
        '.next',
        '.nuxt',
        '.idea',
        '.vscode',
      ].sort(),
    );
  });

  it('prunes any folder holding pyvenv.cfg, whatever its name', async () => {
    const root = await tree({
      'env-3.12/pyvenv.cfg': 'home = /usr/bin',
      'env-3.12/lib/site.py': 'x',
      'app/py/pyvenv.cfg': 'home = /usr/bin',
      'app/py/bin/python': 'x',
      'app/main.py': 'x',
    });
    const result = await walk(root);
    expect(result.paths).toEqual(['app/main.py']);
    expect(result.skipped).toEqual([
      { path: 'app/py/', reason: 'excluded_dir' },
      { path: 'env-3.12/', reason: 'excluded_dir' },
    ]);
  });

  it('never excludes the scan root or its ancestors, even when they carry an excluded name', async () => {
    const root = await tree({
      'pyvenv.cfg': 'x',
      'node_modules/lib/pyvenv.cfg': 'x',
      'node_modules/lib/index.js': 'x',
      'node_modules/lib/node_modules/dep/index.js': 'x',
    });
    expect((await walk(root)).paths).toEqual(['pyvenv.cfg']);
    const sub = await walk(root, { subdir: 'node_modules/lib' });
    expect(sub.paths).toEqual(['node_modules/lib/index.js', 'node_modules/lib/pyvenv.cfg']);
    expect(sub.skipped).toEqual([{ path: 'node_modules/lib/node_modules/', reason: 'excluded_dir' }]);
  });

  it('keeps files and links that merely share an excluded name', async () => {
    const root = await tree({ 'docs/node_modules': 'a file, not a folder', '.git': 'gitdir: ../x' });
    expect((await walk(root)).paths).toEqual(['docs/node_modules', '.git']);
  });
});

describe('exclude_dirs', () => {
  const spec = {
    'build/out.js': 'x',
    'src/build/gen.js': 'x',
    'src/keep.js': 'x',
    'src/vendor/lib.js': 'x',
    'vendor/lib.js': 'x',
  };

  it('prunes a bare name at any depth', async () => {
    const root = await tree(spec);
    const result = await walk(root, { options: { excludeDirs: ['build'] } });
    expect(result.paths).toEqual(['src/vendor/lib.js', 'src/keep.js', 'vendor/lib.js']);
    expect(result.skipped).toEqual([
      { path: 'build/', reason: 'excluded_dir' },
      { path: 'src/build/', reason: 'excluded_dir' },
    ]);
  });

  it.each([['src/vendor'], ['./src/vendor'], ['/src/vendor'], ['src/vendor/'], ['./src//vendor/']])(
    'prunes the root-relative path %s only',
    async (entry) => {
      const root = await tree(spec);
      const result = await walk(root, { options: { excludeDirs: [entry] } });
      expect(result.paths).toEqual(['build/out.js', 'src/build/gen.js', 'src/keep.js', 'vendor/lib.js']);
      expect(result.skipped).toEqual([{ path: 'src/vendor/', reason: 'excluded_dir' }]);
    },
  );

  it('reads a name written from the root (/build, ./build) as the top-level folder only', async () => {
    const root = await tree(spec);
    for (const entry of ['/build', './build/']) {
      const result = await walk(root, { options: { excludeDirs: [entry] } });
      expect(result.skipped).toEqual([{ path: 'build/', reason: 'excluded_dir' }]);
      expect(result.paths).toContain('src/build/gen.js');
    }
  });

  it('applies root-relative paths in a subdir scan and ignores empty entries', async () => {
    const root = await tree(spec);
    const result = await walk(root, { subdir: 'src', options: { excludeDirs: ['src/build', '', '/', './'] } });
    expect(result.paths).toEqual(['src/vendor/lib.js', 'src/keep.js']);
    expect(result.skipped).toEqual([{ path: 'src/build/', reason: 'excluded_dir' }]);
  });
});
