import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { classifyByName, isDocsPath } from '../../src/classify/index.js';
import { BINARY_EXTENSIONS } from '../../src/classify/binary-extensions.js';
import { LINGUIST_EXTENSIONS } from '../../src/classify/language-table.generated.js';
import { TEXT_EXTENSIONS } from '../../src/classify/text-names.js';

const CASES: [path: string, expected: string][] = [
  // code
  ['src/index.ts', 'text:code'],
  ['types/global.d.ts', 'text:code'],
  ['src/component.tsx', 'text:code'],
  ['dist/app.min.js', 'text:code'],
  ['lib/x.mjs', 'text:code'],
  ['include/foo.h', 'text:code'],
  ['Classes/View.m', 'text:code'],
  ['script/build.pl', 'text:code'],
  ['main.py', 'text:code'],
  ['App.vue', 'text:code'],
  ['public/index.html', 'text:code'],
  ['styles/site.css', 'text:code'],
  ['db/migrations/001_init.sql', 'text:code'],
  ['api/service.proto', 'text:code'],
  ['schema.graphql', 'text:code'],
  ['notebooks/analysis.ipynb', 'text:code'],
  ['main.tf', 'text:code'],
  ['resources/views/home.blade.php', 'text:code'],
  ['config.h.in', 'text:code'],
  ['settings.py.template', 'text:code'],
  // docs
  ['README.md', 'text:docs'],
  ['README', 'text:docs'],
  ['readme.txt', 'text:docs'],
  ['README.zh-CN.md', 'text:docs'],
  ['LICENSE', 'text:docs'],
  ['LICENSE-MIT', 'text:docs'],
  ['LICENSE.APACHE2', 'text:docs'],
  ['THIRD-PARTY-NOTICES', 'text:docs'],
  ['COPYING', 'text:docs'],
  ['CHANGELOG', 'text:docs'],
  ['CONTRIBUTING.md', 'text:docs'],
  ['AUTHORS', 'text:docs'],
  ['NOTICE', 'text:docs'],
  ['notes.txt', 'text:docs'],
  ['docs/guide.rst', 'text:docs'],
  ['docs/manual.adoc', 'text:docs'],
  ['docs/page.mdx', 'text:docs'],
  ['paper/main.tex', 'text:docs'],
  ['man/tool.1', 'text:docs'],
  ['logo.png.license', 'text:docs'],
  // config
  ['package.json', 'text:config'],
  ['packages/core/package.json', 'text:config'],
  ['package-lock.json', 'text:config'],
  ['yarn.lock', 'text:config'],
  ['pnpm-lock.yaml', 'text:config'],
  ['Cargo.lock', 'text:config'],
  ['poetry.lock', 'text:config'],
  ['go.sum', 'text:config'],
  ['go.mod', 'text:config'],
  ['tsconfig.json', 'text:config'],
  ['tsconfig.build.json', 'text:config'],
  ['.eslintrc', 'text:config'],
  ['.eslintrc.cjs', 'text:config'],
  ['.prettierrc.yaml', 'text:config'],
  ['eslint.config.js', 'text:config'],
  ['vite.config.ts', 'text:config'],
  ['.env', 'text:config'],
  ['.env.local', 'text:config'],
  ['.env.production.local', 'text:config'],
  ['.editorconfig', 'text:config'],
  ['.gitignore', 'text:config'],
  ['.gitattributes', 'text:config'],
  ['.helmignore', 'text:config'],
  ['.bashrc', 'text:config'],
  ['.npmrc', 'text:config'],
  ['.nvmrc', 'text:config'],
  ['Dockerfile', 'text:config'],
  ['Dockerfile.dev', 'text:config'],
  ['build/app.dockerfile', 'text:config'],
  ['Makefile', 'text:config'],
  ['GNUmakefile', 'text:config'],
  ['rules.mk', 'text:config'],
  ['CMakeLists.txt', 'text:config'],
  ['requirements.txt', 'text:config'],
  ['requirements-dev.txt', 'text:config'],
  ['config.yaml', 'text:config'],
  ['.github/workflows/ci.yml', 'text:config'],
  ['pyproject.toml', 'text:config'],
  ['setup.cfg', 'text:config'],
  ['php.ini', 'text:config'],
  ['nginx/site.conf', 'text:config'],
  ['gradle.properties', 'text:config'],
  ['App.csproj', 'text:config'],
  ['config.yml.example', 'text:config'],
  ['Makefile.in', 'text:config'],
  ['Containerfile', 'text:config'],
  // build files are config whatever language they are written in
  ['Gemfile', 'text:config'],
  ['Rakefile', 'text:config'],
  ['Vagrantfile', 'text:config'],
  ['build.gradle', 'text:config'],
  ['build.gradle.kts', 'text:config'],
  ['build.sbt', 'text:config'],
  ['mix.exs', 'text:config'],
  ['Package.swift', 'text:config'],
  ['SConstruct', 'text:config'],
  ['gulpfile.js', 'text:config'],
  ['setup.py', 'text:config'],
  ['BUILD.bazel', 'text:config'],
  // …but only under their own name
  ['lib/tasks/deploy.rake', 'text:code'],
  ['test/other.exs', 'text:code'],
  ['Sources/App/main.swift', 'text:code'],
  // data
  ['data/users.json', 'text:data'],
  ['data/table.csv', 'text:data'],
  ['data/table.tsv', 'text:data'],
  ['feed.xml', 'text:data'],
  ['assets/icon.svg', 'text:data'],
  ['map.geojson', 'text:data'],
  ['dist/app.js.map', 'text:data'],
  ['events.jsonl', 'text:data'],
  ['fix.patch', 'text:data'],
  ['locale/fr.po', 'text:data'],
  ['refs.bib', 'text:data'],
  // assets
  ['img/logo.png', 'asset:image'],
  ['photo.JPEG', 'asset:image'],
  ['favicon.ico', 'asset:image'],
  ['icon.svgz', 'asset:image'],
  ['sound.mp3', 'asset:audio'],
  ['clip.wav', 'asset:audio'],
  ['movie.mp4', 'asset:video'],
  ['movie.webm', 'asset:video'],
  ['docs/spec.pdf', 'asset:pdf'],
  ['release.zip', 'asset:binary'],
  ['lib/app.jar', 'asset:binary'],
  ['source.tar.gz', 'asset:binary'],
  ['backup.7z', 'asset:binary'],
  ['dist/pkg-1.0-py3-none-any.whl', 'asset:binary'],
  ['bin/tool.exe', 'asset:binary'],
  ['lib/native.dll', 'asset:binary'],
  ['lib/libfoo.so', 'asset:binary'],
  ['lib/libfoo.dylib', 'asset:binary'],
  ['obj/main.o', 'asset:binary'],
  ['lib/libfoo.a', 'asset:binary'],
  ['Main.class', 'asset:binary'],
  ['__pycache__/m.cpython-312.pyc', 'asset:binary'],
  ['pkg/app.wasm', 'asset:binary'],
  ['fonts/inter.woff2', 'asset:binary'],
  ['report.docx', 'asset:binary'],
  ['app.sqlite', 'asset:binary'],
  ['bun.lockb', 'asset:binary'],
  // unknown: the content decides
  ['bin/deploy', 'unknown'],
  ['data.unknownext', 'unknown'],
  ['.hidden', 'unknown'],
];

function describeClass(path: string): string {
  const result = classifyByName(path);
  return result.kind === 'unknown' ? 'unknown' : `${result.kind}:${result.subcategory}`;
}

describe('classifyByName', () => {
  it.each(CASES)('%s → %s', (path, expected) => {
    expect(describeClass(path)).toBe(expected);
  });

  it('covers every subcategory', () => {
    const seen = new Set(CASES.map(([, expected]) => expected));
    for (const sub of ['code', 'docs', 'config', 'data']) expect(seen).toContain(`text:${sub}`);
    for (const sub of ['image', 'audio', 'video', 'pdf', 'binary']) expect(seen).toContain(`asset:${sub}`);
  });

  it('ignores the case of names and extensions', () => {
    for (const [path] of CASES) {
      expect(describeClass(path.toUpperCase())).toBe(describeClass(path.toLowerCase()));
    }
    expect(describeClass('SRC/INDEX.TS')).toBe('text:code');
    expect(describeClass('Photo.PnG')).toBe('asset:image');
  });

  it('reads only the last path segment', () => {
    expect(describeClass('README.md/index.ts')).toBe('text:code');
    expect(describeClass('archive.zip/notes.txt')).toBe('text:docs');
  });

  it('keeps binary and text extension tables disjoint', () => {
    const textExtensions = new Set([...TEXT_EXTENSIONS.keys(), ...Object.values(LINGUIST_EXTENSIONS).flat()]);
    const overlap = [...BINARY_EXTENSIONS.keys()].filter((ext) => textExtensions.has(ext));
    // `.pt` is PyTorch weights (Linguist also lists it for Zope page templates).
    expect(overlap).toEqual(['.pt']);
  });
});

describe('isDocsPath', () => {
  it('is true only for docs names', () => {
    expect(isDocsPath('README.md')).toBe(true);
    expect(isDocsPath('docs/guide/intro.txt')).toBe(true);
    expect(isDocsPath('LICENSE')).toBe(true);
    expect(isDocsPath('src/index.ts')).toBe(false);
    expect(isDocsPath('package.json')).toBe(false);
    expect(isDocsPath('logo.png')).toBe(false);
    expect(isDocsPath('unknown')).toBe(false);
  });
});

describe('language-table.generated.ts', () => {
  it('matches what the generator produces from the installed Linguist data', () => {
    const root = fileURLToPath(new URL('../../../..', import.meta.url));
    const run = () =>
      execFileSync(process.execPath, ['scripts/generate-language-table.mjs', '--check'], { cwd: root, stdio: 'pipe' });
    expect(run).not.toThrow();
  });
});
