// Secrets through every way in: `reposcan scan --local`, a folder the server reads (POST /v1/scan)
// and an uploaded .zip (POST /v1/upload). With the default no written file holds a secret, and
// the findings are listed (paths, lines, rules) on stderr and in the summary.
import { createWriteStream } from 'node:fs';
import { cp, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import { ZipArchive } from 'archiver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi } from '../../../apps/api/test/support/test-runtime.js';
import type { TestApi } from '../../../apps/api/test/support/test-runtime.js';
import { makeTree, MUST_NOT_APPEAR, secretFiles, SECRETS } from '../../../packages/core/test/secrets/secret-fixture.js';
import { readZip } from '../../../packages/core/test/scan/read-zip.js';
import { runCli } from './support/cli-process.js';

interface Outcome {
  scan_id: string | null;
  result: { secrets?: { mode: string; count: number; findings: Array<{ path: string; line: number; rule: string }> } };
  files: Array<{ format: string; path: string }>;
  summary_file: { path: string };
}

/** Every written file as text, the bundle's entries one by one. */
async function writtenTexts(outcome: Outcome): Promise<Map<string, string>> {
  const texts = new Map<string, string>();
  for (const file of outcome.files) {
    if (file.format === 'zip')
      for (const [name, bytes] of await readZip(file.path)) texts.set(`zip:${name}`, bytes.toString('utf8'));
    else texts.set(file.path, await readFile(file.path, 'utf8'));
  }
  texts.set(outcome.summary_file.path, await readFile(outcome.summary_file.path, 'utf8'));
  return texts;
}

function expectNoSecret(texts: Map<string, string>): void {
  expect(texts.size).toBeGreaterThan(3);
  for (const [name, text] of texts)
    for (const secret of MUST_NOT_APPEAR)
      expect(text.includes(secret), `${name} holds ${secret.slice(0, 4)}…`).toBe(false);
}

const EXPECTED = ['config/aws.ini:4:aws', 'src/notify.ts:2:github', 'deploy/id_rsa:1:privatekey'];

describe('reposcan scan with secrets in the tree', () => {
  let api: TestApi;
  let tree: Awaited<ReturnType<typeof makeTree>>;
  let work: string;
  let n = 0;
  const out = (): string => join(work, `out-${++n}`);

  beforeAll(async () => {
    api = await startTestApi();
    tree = await makeTree(secretFiles());
    work = await mkdtemp(join(tmpdir(), 'reposcan-cli-secrets-'));
  });
  afterAll(async () => {
    await api?.close();
    await tree?.cleanup();
    await rm(work, { recursive: true, force: true });
  });

  it('--local redacts every output and lists the findings on stderr and in the summary', async () => {
    const run = await runCli(['scan', '--local', tree.root, '--zip', '--json', '-o', out()], { cwd: work });
    expect(run.code, run.stderr).toBe(0);
    const outcome = JSON.parse(run.stdout) as Outcome;
    expectNoSecret(await writtenTexts(outcome));
    expect(outcome.result.secrets?.mode).toBe('redact');
    expect(outcome.result.secrets?.findings.map((f) => `${f.path}:${f.line}:${f.rule}`)).toEqual(
      expect.arrayContaining(EXPECTED),
    );
    const plain = await runCli(['scan', '--local', tree.root, '-o', out()], { cwd: work });
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stderr).toMatch(/\d+ possible secrets redacted in the outputs/);
    expect(plain.stderr).toContain('src/notify.ts:2:23  github (GITHUB_TOKEN)');
    for (const secret of MUST_NOT_APPEAR) expect(plain.stderr.includes(secret)).toBe(false);
  });

  it('--local --secrets report keeps them and --secrets off lists nothing; a wrong word is a usage error', async () => {
    const report = await runCli(['scan', '--local', tree.root, '--secrets', 'report', '--json', '-o', out()], {
      cwd: work,
    });
    expect(report.code, report.stderr).toBe(0);
    const kept = JSON.parse(report.stdout) as Outcome;
    expect(await readFile(kept.files.find((f) => f.format === 'txt')!.path, 'utf8')).toContain(SECRETS.github.value);
    expect(kept.result.secrets?.mode).toBe('report');
    const off = await runCli(['scan', '--local', tree.root, '--secrets', 'off', '--json', '-o', out()], { cwd: work });
    expect((JSON.parse(off.stdout) as Outcome).result.secrets).toBeUndefined();
    const wrong = await runCli(['scan', '--local', tree.root, '--secrets', 'hide'], { cwd: work });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('--secrets must be one of redact, report, off; got "hide".');
  });

  it('a folder the server reads and an uploaded .zip are redacted too', async () => {
    const folder = join(api.localRoot, 'leaky');
    await cp(tree.root, folder, { recursive: true });
    const env = { REPOSCAN_SERVER: api.baseUrl };
    const scanned = await runCli(['scan', folder, '--zip', '--json', '-o', out()], { cwd: work, env });
    expect(scanned.code, scanned.stderr).toBe(0);
    const viaScan = JSON.parse(scanned.stdout) as Outcome;
    expectNoSecret(await writtenTexts(viaScan));
    expect(viaScan.result.secrets?.findings.map((f) => `${f.path}:${f.line}:${f.rule}`)).toEqual(
      expect.arrayContaining(EXPECTED),
    );

    const zip = join(work, 'leaky.zip');
    const archive = new ZipArchive({ zlib: { level: 6 } });
    const stream = createWriteStream(zip);
    archive.pipe(stream);
    for (const [path, content] of Object.entries(secretFiles())) archive.append(content, { name: `leaky/${path}` });
    await archive.finalize();
    await finished(stream);
    const uploaded = await runCli(['scan', 'leaky.zip', '--zip', '--json', '-o', out()], { cwd: work, env });
    expect(uploaded.code, uploaded.stderr).toBe(0);
    const viaUpload = JSON.parse(uploaded.stdout) as Outcome;
    expectNoSecret(await writtenTexts(viaUpload));
    expect(viaUpload.result.secrets?.count).toBe(viaScan.result.secrets?.count);
    // The published result folder on the server holds no secret either.
    for (const id of [viaScan.scan_id, viaUpload.scan_id]) {
      const dir = join(api.dataDir, 'scans', id as string, 'result');
      for (const name of await readdir(dir)) {
        if (name.endsWith('.zip')) continue;
        const text = await readFile(join(dir, name), 'utf8');
        for (const secret of MUST_NOT_APPEAR) expect(text.includes(secret), `${name}`).toBe(false);
      }
    }
  });

  it('inspect reports how many it would find, and writes nothing', async () => {
    const run = await runCli(['inspect', '--local', tree.root, '--json'], { cwd: work });
    expect(run.code, run.stderr).toBe(0);
    const preview = JSON.parse(run.stdout) as Outcome['result'];
    expect(preview.secrets?.count).toBeGreaterThanOrEqual(8);
    for (const secret of MUST_NOT_APPEAR) expect(run.stdout.includes(secret)).toBe(false);
    // The server's preview (POST /v1/inspect, on its inspect thread) counts the same.
    const folder = join(api.localRoot, 'leaky-preview');
    await cp(tree.root, folder, { recursive: true });
    const remote = await runCli(['inspect', folder, '--json'], { cwd: work, env: { REPOSCAN_SERVER: api.baseUrl } });
    expect(remote.code, remote.stderr).toBe(0);
    expect((JSON.parse(remote.stdout) as Outcome['result']).secrets?.count).toBe(preview.secrets?.count);
  });
});
