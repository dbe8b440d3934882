// The corpora the benchmark builds itself, pinned so every run on every machine scans the same bytes:
//   real     — real JS/TS from npm packages at exact versions (tarballs checked against pinned sha512),
//   real-2x  — `real` plus a second set of the same packages at other versions (twice the bytes),
//   synthetic — 50 000 small deterministic code-like files in folders up to 10 levels deep,
//   git      — a bare git repository whose one commit is `real`, for clone-path runs.
// Everything lives in bench/corpora/ (gitignored) and is rebuilt only when its definition changes.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { cp, mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { counter } from './progress.js';

const run = promisify(execFile);

export const BENCH_DIR = fileURLToPath(new URL('..', import.meta.url));
export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const CORPORA_DIR = join(BENCH_DIR, 'corpora');
const TARBALLS = join(CORPORA_DIR, 'tarballs');
const STATE = join(CORPORA_DIR, '.state');

export interface PinnedPackage {
  name: string;
  version: string;
  /** sha512 of the registry tarball, as in package-lock `integrity`. */
  integrity: string;
}

/** Set A: about 71 MB, 8 900 files of TypeScript, JavaScript (CJS/ESM, bundles), .d.ts, source maps, Markdown. */
export const REAL_SET_A: readonly PinnedPackage[] = [
  {
    name: 'typescript',
    version: '5.9.3',
    integrity: 'sha512-jl1vZzPDinLr9eUt3J/t7V6FgNEw9QjvBPdysz9KfQDD41fQrC2Y4vKQdiaUpFT4bXlb1RHhLpp8wtm6M5TgSw==',
  },
  {
    name: 'date-fns',
    version: '4.1.0',
    integrity: 'sha512-Ukq0owbQXxa/U3EGtsdVBkR1w7KOQ5gIBqdH2hkvknzZPYvBxb/aa6E8L7tmjFtkwZBu3UXBbjIgPo/Ez4xaNg==',
  },
  {
    name: 'rxjs',
    version: '7.8.2',
    integrity: 'sha512-dhKf903U/PQZY6boNNtAGdWbG85WAbjT/1xYoZIC7FAY0yWapOBQVsVrDl58W86//e1VpMNBtRV4MaXfdMySFA==',
  },
  {
    name: 'lodash',
    version: '4.17.21',
    integrity: 'sha512-v2kDEe57lecTulaDIuNTPy3Ry4gLGJ6Z1O3vE1krgXZNrsQ+LFTGHVxVjcXPs17LhbZVGedAJv8XZ1tvj5FvSg==',
  },
  {
    name: '@angular/core',
    version: '20.3.0',
    integrity: 'sha512-4uH2TAMm1nXqQ9lcZyyNkjcdQ0Fjcf9Hh0HYrhMOEV6GAUHvM2I8Vr2dSQ40p/UKLEfe9+cpZ78EPocqPQCG6A==',
  },
  {
    name: 'react-dom',
    version: '19.2.0',
    integrity: 'sha512-UlbRu4cAiGaIewkPyiRGJk0imDN2T3JjieT6spoL2UeSf5od4n5LB/mQ4ejmxhCFT1tYe8IvaFulzynWovsEFQ==',
  },
];

/** Set B: the same kinds of package at other versions (about 68 MB), so A + B is twice A with the same mix. */
export const REAL_SET_B: readonly PinnedPackage[] = [
  {
    name: 'typescript',
    version: '5.8.3',
    integrity: 'sha512-p1diW6TqL9L07nNxvRMM7hMMw4c5XOo/1ibL4aAIGmSAt9slTE1Xgw5KWuof2uTOvCg9BY7ZRi+GaF+7sfgPeQ==',
  },
  {
    name: 'date-fns',
    version: '3.6.0',
    integrity: 'sha512-fRHTG8g/Gif+kSh50gaGEdToemgfj74aRX3swtiouboip5JDLAyDE9F11nHMIcvOaXeOC6D7SpNhi7uFyB7Uww==',
  },
  {
    name: 'rxjs',
    version: '7.8.1',
    integrity: 'sha512-AA3TVj+0A2iuIoQkWEK/tqFjBq2j+6PO6Y0zJcvzLAFhEFIO3HL0vls9hWLncZbAAbK0mar7oZ4V079I/qPMxg==',
  },
  {
    name: 'lodash-es',
    version: '4.17.21',
    integrity: 'sha512-mKnC+QJ9pWVzv+C4/U3rRsHapFfHvQFoFB92e52xeyGMcX6/OlIl78je1u8vePzYZSkkogMPJ2yjxxsb89cxyw==',
  },
  {
    name: '@angular/core',
    version: '19.2.0',
    integrity: 'sha512-WKTRltOt3MMWWuhRX7Y9RonKxIYjZeBDE6XRwceHMgaEDS2d8I2D3AIuqizRsgHpJqDPnQnH+vxcek4FivcSGA==',
  },
  {
    name: 'react-dom',
    version: '19.1.0',
    integrity: 'sha512-Xs1hdnE+DyKgeHJeJznQmYMIBG3TKIHJJT95Q58nHLSrElKlGQqDTR2HQ9fx5CN/Gk6Vh/kupBTDLU11/nDk/g==',
  },
];

/** `--quick`: about 14 MB per set, for developing the harness. */
const QUICK_PACKAGES = new Set(['rxjs', 'lodash', 'lodash-es', 'react-dom']);

export const SYNTHETIC_FILES = { full: 50_000, quick: 5_000 } as const;
/** Bumped when the generator's output changes, so cached trees are rebuilt. */
const SYNTHETIC_VERSION = 1;

export interface Corpus {
  id: string;
  description: string;
  root: string;
  files: number;
  bytes: number;
}

export interface Corpora {
  real: Corpus;
  real2x: Corpus;
  synthetic: Corpus;
  /** Folder holding the bare repository, served by the loopback git server. */
  gitProjectRoot: string;
  /** `bench/<name>.git` under gitProjectRoot (URLs need an owner and a name); its one commit is `real`. */
  gitRepoName: string;
  packages: { a: PinnedPackage[]; b: PinnedPackage[] };
}

export async function prepareCorpora(quick: boolean, log: (line: string) => void): Promise<Corpora> {
  const pick = (set: readonly PinnedPackage[]) => set.filter((p) => !quick || QUICK_PACKAGES.has(p.name));
  const a = pick(REAL_SET_A);
  const b = pick(REAL_SET_B);
  const prefix = quick ? 'quick-' : '';
  await mkdir(TARBALLS, { recursive: true });
  await mkdir(STATE, { recursive: true });

  const realRoot = join(CORPORA_DIR, `${prefix}real`);
  await ensureBuilt(`${prefix}real`, realRoot, a, async () => {
    for (const pkg of a) await unpack(await fetchTarball(pkg, log), join(realRoot, folderName(pkg)));
  });

  // A + B, with A hard-linked from `real` (same bytes, no second copy on disk).
  const real2xRoot = join(CORPORA_DIR, `${prefix}real-2x`);
  await ensureBuilt(`${prefix}real-2x`, real2xRoot, [...a, ...b], async () => {
    await mkdir(real2xRoot, { recursive: true });
    await linkTree(realRoot, join(real2xRoot, 'a'));
    for (const pkg of b) await unpack(await fetchTarball(pkg, log), join(real2xRoot, 'b', folderName(pkg)));
  });

  const syntheticCount = quick ? SYNTHETIC_FILES.quick : SYNTHETIC_FILES.full;
  const syntheticRoot = join(CORPORA_DIR, `synthetic-${syntheticCount}`);
  await ensureBuilt(`synthetic-${syntheticCount}`, syntheticRoot, { SYNTHETIC_VERSION, syntheticCount }, async () => {
    await writeSyntheticTree(syntheticRoot, syntheticCount);
  });

  const gitProjectRoot = join(CORPORA_DIR, 'git');
  const gitRepoName = `bench/${prefix}real.git`;
  await ensureBuilt(`git-${prefix}real`, join(gitProjectRoot, gitRepoName), { a, packed: 'repack -adb' }, async () => {
    await commitTree(realRoot, join(gitProjectRoot, gitRepoName));
  });

  const describe = (set: PinnedPackage[]) => set.map((p) => `${p.name}@${p.version}`).join(', ');
  return {
    real: {
      id: `${prefix}real`,
      description: `npm packages: ${describe(a)}`,
      root: realRoot,
      ...(await treeSize(realRoot)),
    },
    real2x: {
      id: `${prefix}real-2x`,
      description: `real plus ${describe(b)}`,
      root: real2xRoot,
      ...(await treeSize(real2xRoot)),
    },
    synthetic: {
      id: `synthetic-${syntheticCount}`,
      description: `${syntheticCount} small generated code-like files, folders up to 10 deep`,
      root: syntheticRoot,
      ...(await treeSize(syntheticRoot)),
    },
    gitProjectRoot,
    gitRepoName,
    packages: { a, b },
  };
}

/** Builds `dir` unless the marker says it was built from the same definition. */
async function ensureBuilt(id: string, dir: string, definition: unknown, build: () => Promise<void>): Promise<void> {
  const marker = join(STATE, `${id}.json`);
  const key = JSON.stringify(definition);
  if (existsSync(dir) && existsSync(marker) && (await readFile(marker, 'utf8')) === key) return;
  await rm(marker, { force: true });
  await rm(dir, { recursive: true, force: true });
  await build();
  await writeFile(marker, key);
}

function folderName(pkg: PinnedPackage): string {
  return `${pkg.name.replace(/^@/, '').replace('/', '-')}-${pkg.version}`;
}

async function fetchTarball(pkg: PinnedPackage, log: (line: string) => void): Promise<string> {
  const file = join(TARBALLS, `${folderName(pkg)}.tgz`);
  if (existsSync(file) && (await integrityOf(file)) === pkg.integrity) return file;
  log(`npm pack ${pkg.name}@${pkg.version}`);
  await run('npm', ['pack', `${pkg.name}@${pkg.version}`, '--pack-destination', TARBALLS, '--silent'], {
    cwd: TARBALLS,
  });
  const actual = await integrityOf(file);
  if (actual !== pkg.integrity)
    throw new Error(`${pkg.name}@${pkg.version}: tarball integrity ${actual} is not the pinned ${pkg.integrity}`);
  return file;
}

async function integrityOf(file: string): Promise<string> {
  return `sha512-${createHash('sha512')
    .update(await readFile(file))
    .digest('base64')}`;
}

async function unpack(tarball: string, dest: string): Promise<void> {
  await mkdir(dest, { recursive: true });
  // npm tarballs hold everything under `package/`.
  await run('tar', ['-xzf', tarball, '-C', dest, '--strip-components=1', '--no-same-owner']);
  await run('chmod', ['-R', 'u+rwX', dest]);
}

async function linkTree(from: string, to: string): Promise<void> {
  try {
    await run('cp', ['-al', from, to]);
  } catch {
    await cp(from, to, { recursive: true });
  }
}

/** git's environment for the bench's own commits: a fixed author, committer and date, so commit ids are the same everywhere. */
export function benchGitEnv(date: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    GIT_AUTHOR_NAME: 'bench',
    GIT_AUTHOR_EMAIL: 'bench@example.invalid',
    GIT_COMMITTER_NAME: 'bench',
    GIT_COMMITTER_EMAIL: 'bench@example.invalid',
    GIT_AUTHOR_DATE: date,
    GIT_COMMITTER_DATE: date,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
  };
}

/** A bare repository with one reproducible commit of `tree` (ignored files added too, as in the tree). */
async function commitTree(tree: string, bare: string): Promise<void> {
  const env = benchGitEnv('2025-01-01T00:00:00Z');
  await run('git', ['init', '-q', '--bare', '--initial-branch=main', bare], { env });
  const git = ['--git-dir', bare, '--work-tree', tree];
  await run('git', [...git, 'add', '-A', '-f'], { env, maxBuffer: 1 << 26 });
  await run('git', [...git, 'commit', '-q', '-m', 'benchmark corpus'], { env });
  await rm(join(bare, 'index'), { force: true });
  // One pack with a bitmap, as hosting services keep theirs: a clone then streams the stored pack
  // instead of making the loopback server search for deltas, which would be timed as reposcan's.
  await run('git', ['--git-dir', bare, 'repack', '-a', '-d', '-b', '-q'], { env });
}

export async function treeSize(root: string): Promise<{ files: number; bytes: number }> {
  let files = 0;
  let bytes = 0;
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) await walk(path);
      else if (entry.isFile()) {
        files++;
        bytes += (await stat(path)).size;
      }
    }
  };
  await walk(root);
  return { files, bytes };
}

// ---- synthetic tree -------------------------------------------------------------------------

/** Seeded PRNG (mulberry32): the same tree on every machine. */
function mulberry32(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = (
  'account active adapter address agent alias allow apply array asset async audit batch binary block ' +
  'bridge buffer build bundle cache callback cancel channel check child chunk client close cluster code ' +
  'column commit config connect context convert count create cursor data debug decode default delete ' +
  'depth detect digest domain draft driver encode engine entry error event export field filter flag ' +
  'format frame graph group handle hash header index input item job key label layer limit link list ' +
  'loader local lock logger manager map match merge message meta mode model module node number object ' +
  'offset option order output owner page parse patch path payload point policy pool port prefix ' +
  'process project query queue range reader record region remote render report request resolve result ' +
  'route rule runner scan schema scope search secret select server session shard signal size source ' +
  'stage state status store stream string style summary table target task template token total trace ' +
  'tree type update upload user value version view worker writer'
).split(' ');
// Folder names both tools walk into (none of node_modules, dist, build, out, vendor, tmp …).
const DIR_WORDS =
  'api app auth common components core domain features handlers helpers internal lib models modules pages services shared src store utils views'.split(
    ' ',
  );
const EXTENSIONS = ['ts', 'ts', 'ts', 'js', 'js', 'tsx', 'py', 'go', 'rs', 'md', 'json', 'css', 'yaml', 'txt'] as const;

async function writeSyntheticTree(root: string, count: number): Promise<void> {
  const rand = mulberry32(0x5eed);
  const int = (n: number) => Math.floor(rand() * n);
  const word = () => WORDS[int(WORDS.length)] as string;
  const camel = () => word() + word().replace(/^./, (c) => c.toUpperCase());

  // A random recursive tree of about count/10 folders, none deeper than 10 levels.
  const dirs: Array<{ path: string; depth: number }> = [{ path: '', depth: 0 }];
  const dirCount = Math.max(10, Math.round(count / 10));
  while (dirs.length < dirCount) {
    const parent = dirs[int(dirs.length)] as { path: string; depth: number };
    if (parent.depth >= 10) continue;
    const name = `${DIR_WORDS[int(DIR_WORDS.length)] as string}-${dirs.length}`;
    dirs.push({ path: parent.path ? `${parent.path}/${name}` : name, depth: parent.depth + 1 });
  }
  await mkdir(root, { recursive: true });
  for (const dir of dirs) if (dir.path) await mkdir(join(root, dir.path), { recursive: true });

  const line = (ext: string): string => {
    const a = camel();
    const b = word();
    const n = int(1000);
    switch (ext) {
      case 'py':
        return [
          `def ${a}(${b}, ${word()}=None):`,
          `    ${b} = ${word()}.${camel()}(${n})`,
          `    return ${b} + ${n}`,
          `# ${word()} ${word()} ${word()}`,
        ][int(4)] as string;
      case 'go':
        return [`func ${a}(${b} int) error {`, `\t${b} := ${word()}.${camel()}(${n})`, `\treturn nil`, `}`][
          int(4)
        ] as string;
      case 'rs':
        return [
          `pub fn ${a}(${b}: u32) -> Result<(), Error> {`,
          `    let ${b} = ${word()}::${a}(${n})?;`,
          `    Ok(())`,
          `}`,
        ][int(4)] as string;
      case 'md':
        return [
          `## ${word()} ${word()}`,
          `The ${word()} ${word()} uses \`${a}\` to ${word()} the ${word()} (${n} ${word()}s).`,
          `- ${word()} ${word()} ${word()}`,
          '',
        ][int(4)] as string;
      case 'json':
        return `  "${a}": ${[String(n), `"${word()}-${word()}"`, 'true', 'null'][int(4)] as string},`;
      case 'css':
        return [
          `.${word()}-${word()} {`,
          `  margin: ${n % 32}px ${n % 16}px;`,
          `  color: #${(n * 4099).toString(16).padStart(6, '0').slice(0, 6)};`,
          `}`,
        ][int(4)] as string;
      case 'yaml':
        return [`${b}:`, `  ${a}: ${n}`, `  - ${word()}-${word()}`, `# ${word()} ${word()}`][int(4)] as string;
      case 'txt':
        return `${word()} ${word()} ${word()} ${word()} ${n} ${word()}.`;
      default:
        return [
          `export function ${a}(${b}: number, ${word()}: string): ${camel()} {`,
          `  const ${b}Value = this.${camel()}.get(${n}) ?? ${word()}.${camel()}();`,
          `  if (${b} > ${n}) return ${camel()}(${b}, '${word()}-${word()}');`,
          `  // ${word()} the ${word()} before ${word()}`,
          `}`,
          `import { ${camel()}, ${camel()} } from './${word()}-${word()}.js';`,
        ][int(6)] as string;
    }
  };

  const progress = counter('synthetic files', count);
  const encoder = new TextEncoder();
  for (let i = 0; i < count; i++) {
    const dir = dirs[int(dirs.length)] as { path: string };
    const ext = EXTENSIONS[int(EXTENSIONS.length)] as string;
    // Mostly small files (120 B – 1.5 kB), now and then a bigger one, as in a real tree.
    const target = rand() < 0.05 ? 2_000 + int(8_000) : 120 + int(1_400);
    const lines: string[] = [];
    let size = 0;
    while (size < target) {
      const l = line(ext);
      lines.push(l);
      size += l.length + 1;
    }
    const name = `${word()}-${camel()}-${i}.${ext}`;
    await writeFile(join(root, dir.path, name), encoder.encode(`${lines.join('\n')}\n`));
    progress(i + 1);
  }
}
