// A folder of the scanned tree swapped, again and again, with a link to a folder outside it
// (renameat2 RENAME_EXCHANGE, atomic) while the tree is scanned and previewed through the engine's
// real walk and reads: nothing from outside may reach a result, whenever the swap lands.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Buffer } from 'node:buffer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine/engine.js';
import { DEFAULT_ENGINE_LIMITS, DEFAULT_SCAN_OPTIONS } from '../../src/types.js';
import { LOCAL_SOURCE } from './fixture-tree.js';
import type { SkippedPath } from '../../src/types.js';

/** Swaps keep going at least this long while scans run one after another. */
const SWAP_SECONDS = 12;

// Exchanges two paths in place until the time is up, then prints how many swaps it made.
const SWAPPER = `
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
a, b, end = sys.argv[1].encode(), sys.argv[2].encode(), time.monotonic() + float(sys.argv[3])
swaps = 0
while time.monotonic() < end:
    for _ in range(200):
        if libc.renameat2(-100, a, -100, b, 2) != 0:
            sys.exit('renameat2: ' + os.strerror(ctypes.get_errno()))
    swaps += 200
print(swaps)
`;

function startSwapper(a: string, b: string): { alive: () => boolean; swaps: Promise<number> } {
  const child = spawn('python3', ['-c', SWAPPER, a, b, String(SWAP_SECONDS)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  let running = true;
  child.stdout.on('data', (data: Buffer) => (out += data.toString()));
  child.stderr.on('data', (data: Buffer) => (err += data.toString()));
  const swaps = new Promise<number>((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code) => {
      running = false;
      if (code === 0) resolve(Number(out.trim()));
      else reject(new Error(`the swapper failed (${code}): ${err}`));
    });
  });
  return { alive: () => running, swaps };
}

const onLinux = process.platform === 'linux';

describe.skipIf(!onLinux)('a folder swapped with a link to outside the root during scans', () => {
  let base: string;
  let root: string;
  const marker = `OUTSIDE-MARKER-${randomBytes(8).toString('hex')}`;
  const outsideName = `outside-only-${randomBytes(4).toString('hex')}.txt`;

  beforeAll(async () => {
    base = await mkdtemp(join(tmpdir(), 'reposcan-race-'));
    root = join(base, 'root');
    const outside = join(base, 'outside');
    // The same names as inside, so a listing, read or ignore file taken through the swapped
    // folder finds something. Nothing inside is ignored: an `ignored` path means the outside
    // .gitignore was applied.
    await mkdir(join(outside, 'deeper'), { recursive: true });
    await writeFile(join(outside, 'passwd'), `${marker}\n`);
    await writeFile(join(outside, 'notes.md'), `# ${marker}\n`);
    await writeFile(join(outside, outsideName), `${marker}\n`);
    await writeFile(join(outside, '.gitignore'), `# ${marker}\npasswd\nnotes.md\n`);
    await writeFile(join(outside, 'deeper', 'passwd'), `${marker}\n`);
    await mkdir(join(root, 'race', 'sub', 'deeper'), { recursive: true });
    await writeFile(join(root, 'race', 'sub', 'passwd'), 'harmless inside text\n');
    await writeFile(join(root, 'race', 'sub', 'notes.md'), '# inside notes\n');
    await writeFile(join(root, 'race', 'sub', '.gitignore'), '*.tmp\n');
    await writeFile(join(root, 'race', 'sub', 'deeper', 'passwd'), 'harmless deeper text\n');
    await writeFile(join(root, 'README.md'), '# race\n');
    await symlink(outside, join(root, 'race', 'alt'));
  });
  afterAll(() => rm(base, { recursive: true, force: true }));
  // One engine for every round, as a long-lived process scans: the rounds race the swapper, not thread start-up.
  const engine = createEngine({ tokenThreads: 0 });
  afterAll(() => engine.close());

  it(
    'never lets a byte or a name from outside into an artifact, a tree, a file list or a preview',
    async () => {
      const swapper = startSwapper(join(root, 'race', 'sub'), join(root, 'race', 'alt'));
      const counter = (contents: Uint8Array[]): Promise<number[]> => Promise.resolve(contents.map((c) => c.length));
      const options = { ...DEFAULT_SCAN_OPTIONS };
      let rounds = 0;
      /** Walks that met the folders swapped: `alt` walked as a folder, or `sub` skipped. */
      let sawSwap = 0;
      /** Files listed inside and then refused (not read) because they were no longer there. */
      let refusedFiles = 0;
      /** Previews of a subdir below the swapped folder that could not start. */
      let subdirGone = 0;
      const leaks: string[] = [];
      const check = (what: string, text: string): void => {
        if (text.includes(marker)) leaks.push(`${what} of round ${rounds}: bytes from outside`);
        if (text.includes(outsideName)) leaks.push(`${what} of round ${rounds}: a name from outside`);
      };
      const checkPaths = (what: string, paths: string[], skipped: SkippedPath[]): void => {
        for (const entry of skipped)
          if (entry.reason === 'ignored')
            leaks.push(`${what} of round ${rounds}: outside ignore rules applied to ${entry.path}`);
        if (paths.some((p) => p.startsWith('race/alt/')) || skipped.some((s) => s.path.startsWith('race/sub')))
          sawSwap += 1;
        refusedFiles += skipped.filter((s) => s.reason === 'unreadable' && !s.path.endsWith('/')).length;
      };

      // Bounded by the swapper's own time limit: it exits after SWAP_SECONDS.
      while (swapper.alive()) {
        rounds += 1;
        const outDir = await mkdtemp(join(base, 'out-'));
        const report = await engine.runScan(
          {
            root,
            repoName: 'race',
            source: LOCAL_SOURCE,
            options,
            limits: DEFAULT_ENGINE_LIMITS,
            encoding: 'o200k_base',
            outDir,
          },
          { countTokens: counter },
        );
        for (const name of await readdir(outDir))
          check(`artifact ${name}`, await readFile(join(outDir, name), 'latin1'));
        check('scan report', JSON.stringify(report));
        checkPaths(
          'scan',
          [...report.files, ...report.assets].map((f) => f.path),
          report.skipped,
        );
        await rm(outDir, { recursive: true, force: true });

        const preview = await engine.inspect({
          root,
          repoName: 'race',
          source: LOCAL_SOURCE,
          options,
          limits: DEFAULT_ENGINE_LIMITS,
        });
        check('preview', JSON.stringify(preview));
        checkPaths(
          'preview',
          [...preview.files, ...preview.assets].map((f) => f.path),
          preview.skipped,
        );

        // Down to a subdir below the swapped folder, reading the ignore files on the way.
        const deeper = await engine
          .inspect({
            root,
            repoName: 'race',
            source: { ...LOCAL_SOURCE, subdir: 'race/sub/deeper' },
            options,
            limits: DEFAULT_ENGINE_LIMITS,
          })
          .catch((error: unknown) => {
            // The subdir, or a folder above it, was a link when the walk went down: nothing was scanned.
            expect(error).toMatchObject({ name: 'ScanRootError' });
            subdirGone += 1;
            return null;
          });
        if (deeper !== null) {
          check('subdir preview', JSON.stringify(deeper));
          checkPaths(
            'subdir preview',
            deeper.files.map((f) => f.path),
            deeper.skipped,
          );
        }
      }
      const swaps = await swapper.swaps;

      expect(leaks).toEqual([]);
      // The race really ran and reached the walks, the reads and the subdir descent.
      expect(swaps).toBeGreaterThan(10_000);
      expect(rounds).toBeGreaterThan(5);
      expect(sawSwap).toBeGreaterThan(0);
      expect(refusedFiles).toBeGreaterThan(0);
      expect(subdirGone).toBeGreaterThan(0);
    },
    (SWAP_SECONDS + 60) * 1000,
  );
});
