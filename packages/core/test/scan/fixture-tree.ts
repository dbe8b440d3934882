import { cp, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ScanInput } from '../../src/scan/run-scan.js';
import { DEFAULT_ENGINE_LIMITS, DEFAULT_SCAN_OPTIONS } from '../../src/types.js';
import type { ScanOptions, SourceInfo } from '../../src/types.js';

/** A local folder as a scan's source, as the sources package describes one. */
export const LOCAL_SOURCE: SourceInfo = {
  type: 'local',
  url: null,
  hostFamily: null,
  ref: null,
  branch: null,
  commit: null,
  subdir: null,
};

/** A scan of the sample tree at `root` from a local folder, o200k_base, default options but `options`. */
export function sampleScanInput(root: string, outDir: string, options: Partial<ScanOptions> = {}): ScanInput {
  return {
    root,
    repoName: 'sample',
    source: LOCAL_SOURCE,
    options: { ...DEFAULT_SCAN_OPTIONS, ...options },
    limits: DEFAULT_ENGINE_LIMITS,
    encoding: 'o200k_base',
    outDir,
  };
}

export const SAMPLE_REPO = fileURLToPath(new URL('../fixtures/sample-repo', import.meta.url));
export const GOLDEN_DIR = fileURLToPath(new URL('../fixtures/golden', import.meta.url));

/**
 * A temp copy of the committed sample repository plus what git cannot hold for us: ignored
 * files, a dependency folder, and symlinks pointing out of the tree.
 */
export async function makeSampleTree(): Promise<{ root: string; outDir: string; cleanup: () => Promise<void> }> {
  const base = await mkdtemp(join(tmpdir(), 'reposcan-core-'));
  const root = join(base, 'sample');
  const outDir = join(base, 'out');
  await cp(SAMPLE_REPO, root, { recursive: true });
  await mkdir(outDir);
  await writeFile(join(root, 'debug.log'), 'ignored by .gitignore\n');
  await mkdir(join(root, 'build'));
  await writeFile(join(root, 'build', 'out.js'), "console.log('ignored build output');\n");
  await mkdir(join(root, 'node_modules', 'dep'), { recursive: true });
  await writeFile(join(root, 'node_modules', 'dep', 'index.js'), 'module.exports = 1;\n');
  await writeFile(join(base, 'outside-secret.txt'), 'SECRET-OUTSIDE-THE-ROOT\n');
  await symlink(join(base, 'outside-secret.txt'), join(root, 'leak.txt'));
  await symlink('.', join(root, 'src', 'loop'));
  return { root, outDir, cleanup: () => rm(base, { recursive: true, force: true }) };
}
