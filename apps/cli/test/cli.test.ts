// The real `reposcan` launcher against a real API on a free port, and in --local mode:
// exit codes, what lands on stdout and stderr, the files written, TTY and piped progress.
import { mkdir, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi } from '../../../apps/api/test/support/test-runtime.js';
import type { TestApi } from '../../../apps/api/test/support/test-runtime.js';
import { closedPort, runCli, runCliInPty, writeZipWithSymlink } from './support/cli-process.js';
import { craftZip } from '../../api/test/support/zips.js';
import { writeLargeTree } from '../../api/test/support/scenarios.js';

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const ESC = '\x1b';

interface JsonOutcome {
  scan_id: string | null;
  state: string;
  result: { repo_name: string; artifacts?: Record<string, { bytes: number; sha256: string }> };
  files: Array<{ format: string; path: string; bytes: number; sha256: string }>;
  summary_file: { path: string; bytes: number };
}

describe('reposcan CLI', () => {
  let api: TestApi;
  let work: string;
  let env: Record<string, string>;
  let n = 0;
  /** A fresh output folder per run. */
  const outDir = (): string => join(work, `out-${++n}`);

  beforeAll(async () => {
    api = await startTestApi();
    work = await mkdtemp(join(tmpdir(), 'reposcan-cli-'));
    env = { REPOSCAN_SERVER: api.baseUrl };
  });
  afterAll(async () => {
    await api?.close();
    await rm(work, { recursive: true, force: true });
  });

  async function download(scanId: string, format: string): Promise<Buffer> {
    return Buffer.from(await (await fetch(`${api.baseUrl}/v1/download/${scanId}?format=${format}`)).arrayBuffer());
  }

  describe('scan against a server', () => {
    it('exit 0; --json prints one document with the scan_id; the files equal /v1/download byte for byte', async () => {
      const out = outDir();
      const run = await runCli(['scan', api.repoDir, '--zip', '--json', '-o', out], { cwd: work, env });
      expect(run.code, run.stderr).toBe(0);
      const outcome = JSON.parse(run.stdout) as JsonOutcome;
      expect(outcome.scan_id).toMatch(/^[0-9a-f-]{36}$/);
      expect(outcome.state).toBe('completed');
      expect(outcome.files.map((f) => f.format)).toEqual(['txt', 'md', 'json', 'zip']);
      expect((await readdir(out)).sort()).toEqual([
        'sample.json',
        'sample.md',
        'sample.summary.json',
        'sample.txt',
        'sample.zip',
      ]);
      // The summary the digests' footer points at, as GET /v1/summary answers it.
      expect(outcome.summary_file.path).toBe(join(out, 'sample.summary.json'));
      const summary = (await (await fetch(`${api.baseUrl}/v1/summary/${outcome.scan_id}`)).json()) as { data: unknown };
      expect(JSON.parse(await readFile(outcome.summary_file.path, 'utf8'))).toEqual(summary.data);
      for (const file of outcome.files) {
        expect(file.path).toBe(join(out, `sample.${file.format}`));
        expect((await readFile(file.path)).equals(await download(outcome.scan_id!, file.format))).toBe(true);
      }
    });

    it('--max-tokens: each output in parts, one file per part, each equal to its &part=N download', async () => {
      const out = outDir();
      const repo = join(api.localRoot, 'parted');
      await writeLargeTree(repo, 12, 1500);
      const run = await runCli(['scan', repo, '--max-tokens', '1000', '--format', 'txt,json', '--json', '-o', out], {
        cwd: work,
        env,
      });
      expect(run.code, run.stderr).toBe(0);
      const outcome = JSON.parse(run.stdout) as JsonOutcome & {
        result: { artifacts: Record<string, { parts?: Array<{ part: number; sha256: string }> }> };
      };
      for (const format of ['txt', 'json']) {
        const parts = outcome.result.artifacts[format]?.parts ?? [];
        expect(parts.length, format).toBeGreaterThan(1);
        const files = outcome.files.filter((f) => f.format === format);
        expect(files.map((f) => f.path)).toEqual(
          parts.map((p) => join(out, `parted.part-${String(p.part).padStart(2, '0')}.${format}`)),
        );
        for (const [i, file] of files.entries()) {
          const fromApi = Buffer.from(
            await (
              await fetch(`${api.baseUrl}/v1/download/${outcome.scan_id}?format=${format}&part=${i + 1}`)
            ).arrayBuffer(),
          );
          expect((await readFile(file.path)).equals(fromApi)).toBe(true);
        }
      }
    });

    it('piped: stdout is only the written paths; stderr has plain phase lines and no escape codes', async () => {
      const out = outDir();
      const run = await runCli(['scan', 'repos/sample', '--format', 'md,json', '-o', out], {
        cwd: join(api.localRoot, '..'),
        env,
      });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toBe(
        `${join(out, 'sample.md')}\n${join(out, 'sample.json')}\n${join(out, 'sample.summary.json')}\n`,
      );
      expect((await readdir(out)).sort()).toEqual(['sample.json', 'sample.md', 'sample.summary.json']);
      expect(run.stderr).toContain(`reposcan: wrote ${join(out, 'sample.md')} (`);
      expect(run.stderr).toMatch(/^reposcan: (queued|walk|read|render|publish)/m);
      expect(run.stderr).toMatch(/^reposcan: completed$/m);
      expect(run.stderr).not.toContain(ESC);
      expect(run.stderr).not.toContain('\r');
    });

    it('on a terminal: a progress bar redrawn in place with a percentage', async () => {
      const out = outDir();
      const run = await runCliInPty(['scan', api.repoDir, '-o', out], { cwd: work, env });
      expect(run.code, run.stdout).toBe(0);
      expect(run.stdout).toMatch(/\r[█░]{24} +\d{1,3}% /);
      expect(run.stdout).toContain('100% completed');
      expect(run.stdout).toContain(`${ESC}[K`);
      // stdout and stderr are the same terminal: each written path shows once.
      for (const name of ['sample.txt', 'sample.md', 'sample.json', 'sample.summary.json'])
        expect(run.stdout.split(join(out, name)).length - 1, name).toBe(1);
      expect(run.stdout).toContain(join(out, 'sample.txt'));
    });

    it('uploads an existing .zip and --cleanup deletes the scan afterwards', async () => {
      const zip = join(work, 'upload.zip');
      const { buildZip } = await import('../../../apps/api/test/support/zips.js');
      await buildZip(zip, { 'demo-main/README.md': '# Demo\n', 'demo-main/app.py': 'print(1)\n' });
      const run = await runCli(['scan', 'upload.zip', '--json', '--cleanup', '-q', '-o', outDir()], { cwd: work, env });
      expect(run.code, run.stderr).toBe(0);
      const outcome = JSON.parse(run.stdout) as JsonOutcome;
      expect(outcome.result.repo_name).toBe('demo-main');
      expect(run.stderr).toBe('');
      expect((await fetch(`${api.baseUrl}/v1/scans/${outcome.scan_id}`)).status).toBe(404);
    });

    it('every option reaches the API as the scan option it mirrors, for a scan body and for upload query parameters', async () => {
      const flags = [
        ...[
          '--include',
          '*.md,*.ts',
          '--include',
          '*.py',
          '--exclude',
          '*.test.ts',
          '--exclude-dir',
          'docs',
          '--exclude-dir',
          'data,config',
        ],
        ...[
          '--lite',
          '--zip',
          '--tree-depth',
          '2',
          '--docs-only',
          '--no-sync-ignore',
          '--skip-tree',
          '--size-limit',
          '5000',
          '--secrets',
          'report',
          '--max-tokens',
          '5000',
          '--compress',
          'signatures',
          '--remove-comments',
        ],
      ];
      const expected = {
        include_patterns: ['*.md', '*.ts', '*.py'],
        exclude_patterns: ['*.test.ts'],
        exclude_dirs: ['docs', 'data', 'config'],
        lite: true,
        create_zip: true,
        tree_depth: 2,
        docs_only: true,
        sync_ignore: false,
        skip_tree: true,
        size_limit: 5000,
        secrets: 'report',
        max_tokens_per_part: 5000,
        compress: 'signatures',
        remove_comments: true,
        // A change digest needs a remote repository: the one option this test cannot send.
        base_ref: null,
      };
      const zip = join(work, 'options.zip');
      const { buildZip } = await import('../../../apps/api/test/support/zips.js');
      await buildZip(zip, { 'README.md': '# Options\n' });
      for (const target of [api.repoDir, zip]) {
        const run = await runCli(['scan', target, ...flags, '--json', '-q', '-o', outDir()], { cwd: work, env });
        expect(run.code, run.stderr).toBe(0);
        const { scan_id } = JSON.parse(run.stdout) as JsonOutcome;
        const summary = (await (await fetch(`${api.baseUrl}/v1/summary/${scan_id}`)).json()) as {
          data: { options: unknown };
        };
        expect(summary.data.options, target).toEqual(expected);
      }
    });

    it('--callback-url reaches the server: one without WEBHOOK_SECRET refuses it (exit 3)', async () => {
      const run = await runCli(['scan', api.repoDir, '--callback-url', 'https://ci.example.com/hook'], {
        cwd: work,
        env,
      });
      expect(run.code).toBe(3);
      expect(run.stderr).toContain('WEBHOOKS_NOT_CONFIGURED');
      expect(run.stderr).toContain('WEBHOOK_SECRET');
    });

    it('exit 3 when the API refuses: its code and sentence on stderr, and an error document with --json', async () => {
      const outside = await mkdtemp(join(tmpdir(), 'reposcan-outside-'));
      try {
        const run = await runCli(['scan', outside, '-o', outDir()], { cwd: work, env });
        expect(run.code).toBe(3);
        expect(run.stdout).toBe('');
        expect(run.stderr).toContain('OUTSIDE_ALLOWED_ROOTS');
        expect(run.stderr).toContain('This path is outside the folders this server allows scanning');
        const json = await runCli(['scan', outside, '--json'], { cwd: work, env });
        expect(json.code).toBe(3);
        expect(JSON.parse(json.stdout)).toMatchObject({
          error: { exit_code: 3, status: 403, code: 'OUTSIDE_ALLOWED_ROOTS' },
        });
      } finally {
        await rm(outside, { recursive: true, force: true });
      }
    });

    it('exit 3 when the API refuses the upload: a zip with a symlink entry is UNSAFE_ARCHIVE before any scan', async () => {
      const zip = join(work, 'symlink.zip');
      await writeZipWithSymlink(zip);
      const out = outDir();
      const run = await runCli(['scan', zip, '-o', out], { cwd: work, env });
      expect(run.code, run.stderr).toBe(3);
      expect(run.stderr).toMatch(/UNSAFE_ARCHIVE/);
      expect(run.stdout).toBe('');
      expect(await readdir(out)).toEqual([]);
    });

    it('exit 4 when the scan fails: a zip whose data lies about its size ends UNSAFE_ARCHIVE in the worker', async () => {
      const zip = join(work, 'liar.zip');
      craftZip(zip, {
        entries: [
          { name: 'repo/README.md', data: '# fine\n' },
          { name: 'repo/liar.bin', zeros: 1024 * 1024, method: 'deflated' },
        ],
        patches: [{ op: 'set-uncompressed', index: 1, size: 10 }],
      });
      const out = outDir();
      const run = await runCli(['scan', zip, '-o', out], { cwd: work, env });
      expect(run.code, run.stderr).toBe(4);
      expect(run.stderr).toMatch(/scan [0-9a-f-]{36} failed: UNSAFE_ARCHIVE: /);
      expect(run.stdout).toBe('');
      expect(await readdir(out)).toEqual([]);
    });

    it('exit 5 when no server answers', async () => {
      const port = await closedPort();
      const run = await runCli(['scan', api.repoDir, '--server', `http://127.0.0.1:${port}`], { cwd: work, env });
      expect(run.code).toBe(5);
      expect(run.stderr).toContain(`cannot reach http://127.0.0.1:${port}`);
      expect(run.stderr).toContain('ECONNREFUSED');
      // With --json, the code `reposcan mcp` gives the same condition.
      const json = await runCli(['scan', api.repoDir, '--json', '--server', `http://127.0.0.1:${port}`], {
        cwd: work,
        env,
      });
      expect(JSON.parse(json.stdout)).toMatchObject({
        error: { exit_code: 5, status: null, code: 'SERVER_UNREACHABLE' },
      });
    });

    it('exit 5 when what answers is not a reposcan API', async () => {
      const { createServer } = await import('node:http');
      const page = createServer((_req, res) =>
        res.writeHead(200, { 'content-type': 'text/html' }).end('<h1>Welcome to nginx!</h1>'),
      );
      await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
      try {
        const { port } = page.address() as { port: number };
        const run = await runCli(['scan', api.repoDir, '--server', `http://127.0.0.1:${port}`], { cwd: work, env });
        expect(run.code).toBe(5);
        expect(run.stderr).toContain('what answered is not a reposcan API (HTTP 200 UNEXPECTED_RESPONSE)');
        expect(run.stderr).toContain('check that the URL points at a reposcan API');
      } finally {
        await new Promise((resolve) => page.close(resolve));
      }
    });
  });

  describe('usage errors exit 2', () => {
    it.each([
      [['scan'], /needs a target/],
      [['scan', '.', '--no-such-option'], /Unknown option '--no-such-option'/],
      [['scan', '.', '--tree-depth', 'deep'], /--tree-depth must be a whole number/],
      [['scan', '.', '--format', 'pdf'], /--format must be one of txt, md, json, zip/],
      [['scan', '--local', 'https://github.com/octocat/Hello-World'], /a repository URL needs a server/],
      [['frobnicate'], /unknown command "frobnicate"/],
    ])('reposcan %j', async (args, message) => {
      const run = await runCli(args, { cwd: work, env });
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(message);
      expect(run.stdout).toBe('');
    });

    it('with --json, a usage error is a JSON document on stdout too', async () => {
      const run = await runCli(['scan', '.', '--json', '--lite=yes'], { cwd: work, env });
      expect(run.code).toBe(2);
      // The documented shape whole: what does not apply (no HTTP answer, no scan) is null.
      expect(JSON.parse(run.stdout)).toEqual({
        error: {
          exit_code: 2,
          status: null,
          code: 'USAGE',
          detail: expect.stringMatching(/--lite/) as unknown,
          request_id: null,
          scan_id: null,
        },
      });
    });

    it('--help prints usage with the exit codes and exits 0', async () => {
      const run = await runCli(['scan', '--help'], { cwd: work, env });
      expect(run.code).toBe(0);
      expect(run.stdout).toContain('Usage: reposcan scan');
      expect(run.stdout).toMatch(/^ {2}4 {2}the scan ended failed or cancelled/m);
    });
  });

  describe('inspect', () => {
    it('prints a table of path, type, bytes, tokens and the totals on stdout', async () => {
      const run = await runCli(['inspect', api.repoDir, '--include', '*.md,*.ts'], { cwd: work, env });
      expect(run.code, run.stderr).toBe(0);
      const lines = run.stdout.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^PATH +TYPE +BYTES +TOKENS$/);
      expect(lines).toContainEqual(expect.stringMatching(/^README\.md +docs +67 +\d+$/));
      expect(lines).toContainEqual(expect.stringMatching(/^src\/index\.ts +code +206 +\d+$/));
      expect(lines.at(-1)).toMatch(/^\d+ files, .+ tokens \(estimate\), \d+ skipped · sample$/);
      expect(lines.some((l) => l.startsWith('data/table.csv'))).toBe(false);
    });

    it('--json prints the preview the API returned', async () => {
      const run = await runCli(['inspect', api.repoDir, '--json', '--docs-only'], { cwd: work, env });
      expect(run.code, run.stderr).toBe(0);
      const preview = JSON.parse(run.stdout) as { repository: { name: string }; files: Array<{ subcategory: string }> };
      expect(preview.repository.name).toBe('sample');
      expect(preview.files.length).toBeGreaterThan(0);
      expect(preview.files.every((f) => f.subcategory === 'docs')).toBe(true);
    });

    it('--max-tokens estimates the parts, from the server and with --local alike', async () => {
      const remote = await runCli(['inspect', api.repoDir, '--json', '--max-tokens', '1000'], { cwd: work, env });
      expect(remote.code, remote.stderr).toBe(0);
      const estimate = (JSON.parse(remote.stdout) as { parts_estimate?: number }).parts_estimate;
      expect(estimate).toBeGreaterThanOrEqual(1);
      const local = await runCli(['inspect', '--local', api.repoDir, '--json', '--max-tokens', '1000'], { cwd: work });
      expect(local.code, local.stderr).toBe(0);
      expect((JSON.parse(local.stdout) as { parts_estimate?: number }).parts_estimate).toBe(estimate);
      const table = await runCli(['inspect', api.repoDir, '--max-tokens', '1000'], { cwd: work, env });
      expect(table.stdout).toMatch(new RegExp(`^about ${estimate} parts? of the txt output \\(estimate\\)$`, 'm'));
      const plain = await runCli(['inspect', api.repoDir, '--json'], { cwd: work, env });
      expect(JSON.parse(plain.stdout)).not.toHaveProperty('parts_estimate');
      expect((await runCli(['inspect', api.repoDir, '--max-tokens', '10'], { cwd: work, env })).code).toBe(2);
    });
  });

  describe('--local (no server)', () => {
    it('writes the same txt, md and json digests the server produces for the folder', async () => {
      const out = outDir();
      const port = await closedPort();
      // A server that is not running must not matter.
      const run = await runCli(['scan', '--local', api.repoDir, '--json', '-o', out], {
        cwd: work,
        env: { REPOSCAN_SERVER: `http://127.0.0.1:${port}` },
      });
      expect(run.code, run.stderr).toBe(0);
      const outcome = JSON.parse(run.stdout) as JsonOutcome;
      expect(outcome.scan_id).toBeNull();
      expect((await readdir(out)).sort()).toEqual(['sample.json', 'sample.md', 'sample.summary.json', 'sample.txt']);

      const server = (await (
        await fetch(`${api.baseUrl}/v1/scan`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ repo_path: api.repoDir }),
        })
      ).json()) as { data: { scan_id: string } };
      for (const format of ['txt', 'md', 'json']) {
        expect(
          (await readFile(join(out, `sample.${format}`))).equals(await download(server.data.scan_id, format)),
          format,
        ).toBe(true);
      }
    });

    it('on a terminal shows the bar too; inspect --local prints the table', async () => {
      const out = outDir();
      const pty = await runCliInPty(['scan', '--local', api.repoDir, '--zip', '-o', out], { cwd: work });
      expect(pty.code, pty.stdout).toBe(0);
      for (const name of ['sample.zip', 'sample.summary.json'])
        expect(pty.stdout.split(join(out, name)).length - 1, name).toBe(1);
      expect(pty.stdout).toMatch(/\r[█░]{24} +\d{1,3}% read \d+\/\d+ files/);
      const table = await runCli(['inspect', '--local', '.'], { cwd: api.repoDir });
      expect(table.code, table.stderr).toBe(0);
      expect(table.stdout).toMatch(/^README\.md +docs +67 +\d+$/m);
    });

    it('a missing folder is a usage error (exit 2)', async () => {
      const run = await runCli(['scan', '--local', join(work, 'nope')], { cwd: work });
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(`no folder at ${join(work, 'nope')}`);
    });
  });

  it('`reposcan` is linked into node_modules/.bin by npm ci and runs from any folder', async () => {
    const dir = await mkdtemp(join(work, 'elsewhere-'));
    await mkdir(join(dir, 'sub'));
    const { execFile } = await import('node:child_process');
    const { promisify } = await import('node:util');
    const { stdout } = await promisify(execFile)(join(REPO_ROOT, 'node_modules/.bin/reposcan'), ['--version'], {
      cwd: join(dir, 'sub'),
      env: { ...process.env, REPOSCAN_CLI_FROM_SOURCE: '1' },
    });
    expect(stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });
});
