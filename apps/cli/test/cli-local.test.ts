// `reposcan` as a child process with --local (no server): where the files go, that a scan never
// reads its own outputs, the summary the digests point at, the user token cache, and usage.
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './support/cli-process.js';

interface LocalOutcome {
  result: {
    repo_name: string;
    skipped_count: number;
    token_cache: { hits: number; misses: number } | null;
    summary: { total_files: number };
  };
  files: Array<{ format: string; path: string; bytes: number }>;
  summary_file: { path: string; bytes: number };
}

describe('reposcan scan --local', () => {
  let work: string;
  let repo: string;
  let cacheHome: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'reposcan-cli-local-'));
    repo = join(work, 'proj');
    cacheHome = join(work, 'cache-home');
    env = { XDG_CACHE_HOME: cacheHome };
    await mkdir(join(repo, 'src'), { recursive: true });
    await writeFile(join(repo, 'README.md'), '# proj\n\nA small project.\n');
    await writeFile(join(repo, 'src', 'main.ts'), 'export const answer = 42;\n');
    await writeFile(join(repo, '.gitignore'), 'secret.env\n');
    await writeFile(join(repo, 'secret.env'), 'TOKEN=x\n');
  });
  afterAll(async () => {
    await rm(work, { recursive: true, force: true });
  });

  it('from inside the folder, the default output goes to the user cache, says so, and a rerun is identical', async () => {
    const first = await runCli(['scan', '--local', '..'], { cwd: join(repo, 'src'), env });
    expect(first.code, first.stderr).toBe(0);
    const out = join(cacheHome, 'reposcan', 'out', 'proj');
    expect(first.stdout).toBe(
      ['proj.txt', 'proj.md', 'proj.json', 'proj.summary.json'].map((f) => `${join(out, f)}\n`).join(''),
    );
    expect(first.stderr).toContain(`writing to ${out} (the current folder is inside the scanned one; -o chooses)`);
    // Nothing was written into the scanned folder.
    expect((await readdir(repo)).sort()).toEqual(['.gitignore', 'README.md', 'secret.env', 'src']);
    const txt = await readFile(join(out, 'proj.txt'), 'utf8');

    const second = await runCli(['scan', '--local', repo], { cwd: repo, env });
    expect(second.code, second.stderr).toBe(0);
    expect(await readFile(join(out, 'proj.txt'), 'utf8')).toBe(txt);
  });

  it('from outside the folder, the default output is the current folder', async () => {
    const here = await mkdtemp(join(work, 'here-'));
    const run = await runCli(['scan', '--local', repo, '--format', 'md'], { cwd: here, env });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe(`${join(here, 'proj.md')}\n${join(here, 'proj.summary.json')}\n`);
    expect(run.stderr).not.toContain('writing to');
  });

  it.each([
    ['the scanned folder itself', '.'],
    ['a folder inside it', 'digest'],
  ])('-o %s: the next scan leaves the outputs out of the walk and writes the same digests', async (_, output) => {
    const copy = join(work, `proj-o-${output === '.' ? 'root' : output}`);
    await mkdir(join(copy, 'src'), { recursive: true });
    await writeFile(join(copy, 'README.md'), '# proj\n');
    await writeFile(join(copy, 'src', 'main.ts'), 'export const answer = 42;\n');
    const name = copy.split('/').at(-1)!;
    const scan = () => runCli(['scan', '--local', '.', '-o', output, '--json', '--zip'], { cwd: copy, env });

    const first = await scan();
    expect(first.code, first.stderr).toBe(0);
    const firstOutcome = JSON.parse(first.stdout) as LocalOutcome;
    expect(firstOutcome.result.summary.total_files).toBe(2);
    // The second scan lists the first one's outputs as skipped; everything else is the same.
    const digests = () =>
      Promise.all(
        ['txt', 'md', 'json'].map(async (f) =>
          (await readFile(join(copy, output, `${name}.${f}`), 'utf8'))
            .replace(/^.*Skipped paths.*\n/m, '')
            .replace(/"skipped_count": \d+/, ''),
        ),
      );
    const before = await digests();

    const second = await scan();
    expect(second.code, second.stderr).toBe(0);
    const outcome = JSON.parse(second.stdout) as LocalOutcome;
    expect(outcome.result.summary.total_files).toBe(2);
    expect(await digests()).toEqual(before);
    // Skipped, and listed so in the summary like any excluded path; no staging folder in the tree.
    const summary = JSON.parse(await readFile(outcome.summary_file.path, 'utf8')) as {
      skipped: Array<{ path: string; reason: string }>;
    };
    const skipped = summary.skipped.map((s) => s.path);
    if (output === '.')
      expect(skipped).toEqual(
        expect.arrayContaining([`${name}.txt`, `${name}.md`, `${name}.json`, `${name}.zip`, `${name}.summary.json`]),
      );
    else expect(skipped).toEqual(['digest/']);
    expect(skipped.filter((p) => p.includes('.reposcan-'))).toEqual([]);
    expect((await readdir(join(copy, output))).filter((f) => f.startsWith('.reposcan-'))).toEqual([]);
  });

  it('writes <repo>.summary.json beside the digests: the skipped paths their footer points at', async () => {
    const out = await mkdtemp(join(work, 'out-'));
    const run = await runCli(['scan', '--local', repo, '-o', out, '--json'], { cwd: work, env });
    expect(run.code, run.stderr).toBe(0);
    const outcome = JSON.parse(run.stdout) as LocalOutcome;
    expect(outcome.summary_file.path).toBe(join(out, 'proj.summary.json'));
    const txt = await readFile(join(out, 'proj.txt'), 'utf8');
    expect(txt).toContain('Skipped paths: 1 (listed in summary.json)');
    const summary = JSON.parse(await readFile(outcome.summary_file.path, 'utf8')) as {
      skipped: Array<{ path: string; reason: string }>;
      files: Array<{ path: string }>;
    };
    expect(summary.skipped).toEqual([expect.objectContaining({ path: 'secret.env', reason: 'ignored' })]);
    expect(summary.files.map((f) => f.path)).toEqual(expect.arrayContaining(['README.md', 'src/main.ts']));
    expect((await readdir(out)).sort()).toEqual(['proj.json', 'proj.md', 'proj.summary.json', 'proj.txt']);
  });

  it('--max-tokens writes each output as numbered part files, each within the budget', async () => {
    const big = join(work, 'big');
    await mkdir(big, { recursive: true });
    for (let i = 0; i < 6; i++)
      await writeFile(
        join(big, `m${i}.ts`),
        `export const v${i} = [${Array.from({ length: 400 }, (_, k) => k * i).join(', ')}];\n`,
      );
    const out = await mkdtemp(join(work, 'parts-'));
    const run = await runCli(['scan', '--local', big, '-o', out, '--max-tokens', '1000', '--json'], { cwd: work, env });
    expect(run.code, run.stderr).toBe(0);
    const outcome = JSON.parse(run.stdout) as LocalOutcome;
    const names = (await readdir(out)).sort();
    for (const format of ['txt', 'md', 'json']) {
      const parts = names.filter((n) => n.startsWith('big.part-') && n.endsWith(`.${format}`));
      expect(parts.length, format).toBeGreaterThan(1);
      expect(parts[0]).toBe(`big.part-01.${format}`);
    }
    expect(names).not.toContain('big.txt');
    expect(outcome.files.map((f) => f.path).sort()).toEqual(
      names.filter((n) => n.startsWith('big.part-')).map((n) => join(out, n)),
    );
    const summary = JSON.parse(await readFile(outcome.summary_file.path, 'utf8')) as {
      parts: Array<{ format: string; parts: Array<{ tokens: number }> }>;
    };
    for (const output of summary.parts) for (const part of output.parts) expect(part.tokens).toBeLessThanOrEqual(1000);
  });

  it('--max-tokens past 99 parts writes names as wide as the count, which list in part order', async () => {
    const many = join(work, 'many');
    await mkdir(many, { recursive: true });
    for (let i = 0; i < 110; i++)
      await writeFile(
        join(many, `m${String(i).padStart(3, '0')}.ts`),
        `export const v${i} = [${Array.from({ length: 300 }, (_, k) => k * i).join(', ')}];\n`,
      );
    const out = await mkdtemp(join(work, 'many-parts-'));
    const run = await runCli(
      ['scan', '--local', many, '-o', out, '--max-tokens', '1000', '--json', '--format', 'txt'],
      {
        cwd: work,
        env,
      },
    );
    expect(run.code, run.stderr).toBe(0);
    const outcome = JSON.parse(run.stdout) as LocalOutcome;
    const parts = outcome.files.filter((f) => f.format === 'txt').map((f) => basename(f.path));
    expect(parts.length).toBeGreaterThan(99);
    expect(parts.slice(0, 2)).toEqual(['many.part-001.txt', 'many.part-002.txt']);
    expect(parts).toContain('many.part-100.txt');
    expect((await readdir(out)).filter((n) => n.startsWith('many.part-')).sort()).toEqual(parts);
    // Written in part order: each part's header names its number.
    for (const [i, name] of parts.entries())
      expect(await readFile(join(out, name), 'utf8')).toMatch(new RegExp(`^Part ${i + 1} of many`));
  });

  it('--max-tokens below 1000 is a usage error', async () => {
    const run = await runCli(['scan', '--local', repo, '--max-tokens', '10'], { cwd: work, env });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--max-tokens');
  });

  it('a folder of a git work tree: tracked files are kept, the .gitignore above applies, paths start at the top', async () => {
    const top = join(work, 'wt');
    await mkdir(join(top, 'app'), { recursive: true });
    await writeFile(join(top, '.gitignore'), '*.log\n');
    await writeFile(join(top, 'app', 'main.ts'), 'export {};\n');
    await writeFile(join(top, 'app', 'kept.log'), 'tracked on purpose\n');
    await writeFile(join(top, 'app', 'new.log'), 'x\n');
    const gitEnv = { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', HOME: top };
    execFileSync('git', ['init', '-q'], { cwd: top, env: gitEnv });
    execFileSync('git', ['add', '-f', 'app/kept.log'], { cwd: top, env: gitEnv });
    const scan = () => runCli(['scan', '--local', 'app', '-o', 'app', '--json'], { cwd: top, env });
    // Twice: the second scan finds the first one's outputs in the folder and leaves them out.
    for (const run of [await scan(), await scan()]) {
      expect(run.code, run.stderr).toBe(0);
      const summary = JSON.parse(await readFile(join(top, 'app', 'app.summary.json'), 'utf8')) as {
        repository: { subdir: string | null };
        files: Array<{ path: string }>;
        skipped: Array<{ path: string; reason: string }>;
      };
      expect(summary.repository.subdir).toBe('app');
      expect(summary.files.map((f) => f.path).sort()).toEqual(['app/kept.log', 'app/main.ts']);
      expect(summary.skipped).toContainEqual({ path: 'app/new.log', reason: 'ignored' });
    }
  });

  it('piped: each written path once on stdout, and once on stderr as a "wrote" note', async () => {
    const out = await mkdtemp(join(work, 'out-'));
    const run = await runCli(['scan', '--local', repo, '-o', out], { cwd: work, env });
    expect(run.code, run.stderr).toBe(0);
    for (const name of ['proj.txt', 'proj.md', 'proj.json', 'proj.summary.json']) {
      const path = join(out, name);
      expect(run.stdout.split(path).length - 1, name).toBe(1);
      expect(run.stderr).toMatch(
        new RegExp(`^reposcan: wrote ${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(\\d+ bytes\\)$`, 'm'),
      );
    }
  });

  it('counts once per user: a repeat scan takes every count from the cache; --no-cache neither reads nor writes it', async () => {
    const fresh = join(work, 'cache-fresh');
    const scan = (extra: string[] = []) =>
      runCli(['scan', '--local', repo, '-o', join(work, 'out-cache'), '--json', ...extra], {
        cwd: work,
        env: { XDG_CACHE_HOME: fresh },
      });

    const skip = JSON.parse((await scan(['--no-cache'])).stdout) as LocalOutcome;
    expect(skip.result.token_cache).toBeNull();
    expect(await readdir(fresh).catch(() => [])).toEqual([]);

    const first = JSON.parse((await scan()).stdout) as LocalOutcome;
    // README.md, src/main.ts and .gitignore are counted.
    expect(first.result.token_cache).toEqual({ hits: 0, misses: 3 });
    const again = JSON.parse((await scan()).stdout) as LocalOutcome;
    expect(again.result.token_cache).toEqual({ hits: 3, misses: 0 });
    expect(await readdir(join(fresh, 'reposcan', 'tokens'))).toEqual(['o200k_base']);
  });
});

describe('reposcan usage', () => {
  it('no arguments: the usage on stderr, nothing on stdout, exit 2', async () => {
    const run = await runCli([], { cwd: tmpdir() });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('Usage:\n  reposcan scan');
    expect(run.stderr).toContain('Exit codes:');
  });

  it('--no-cache without --local is a usage error', async () => {
    const run = await runCli(['scan', 'https://example.com/a/b', '--no-cache'], { cwd: tmpdir() });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--no-cache applies to --local scans');
  });

  it('--callback-url with --local is a usage error: only a server sends webhooks', async () => {
    const run = await runCli(['scan', '--local', '.', '--callback-url', 'https://ci.example.com/hook'], {
      cwd: tmpdir(),
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--callback-url asks a server to POST the finished scan');
  });
});
