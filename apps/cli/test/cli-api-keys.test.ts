// The real `reposcan` launcher against a real API with API keys on: the key made by `keys add`
// works from REPOSCAN_API_KEY or --api-key; none, or a wrong one, is the API's refusal (exit 3).
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi } from '../../../apps/api/test/support/test-runtime.js';
import type { TestApi } from '../../../apps/api/test/support/test-runtime.js';
import { runCli } from './support/cli-process.js';

describe('reposcan CLI with API keys', () => {
  let api: TestApi;
  let work: string;
  let keyFile: string;
  let key = '';

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'reposcan-cli-keys-'));
    keyFile = join(work, 'keys');
    const added = await runCli(['keys', 'add', 'dev', '--file', keyFile], { cwd: work });
    expect(added.code, added.stderr).toBe(0);
    key = added.stdout.trim();
    api = await startTestApi({ API_KEYS_FILE: keyFile });
  });
  afterAll(async () => {
    await api?.close();
    await rm(work, { recursive: true, force: true });
  });

  it('scans with the key from REPOSCAN_API_KEY: exit 0, the artifacts written, the scan owned by the key', async () => {
    const out = join(work, 'out-env');
    const run = await runCli(['scan', api.repoDir, '--json', '-o', out], {
      cwd: work,
      env: { REPOSCAN_SERVER: api.baseUrl, REPOSCAN_API_KEY: key },
    });
    expect(run.code, run.stderr).toBe(0);
    const { scan_id } = JSON.parse(run.stdout) as { scan_id: string };
    expect((await readdir(out)).sort()).toEqual(['sample.json', 'sample.md', 'sample.summary.json', 'sample.txt']);
    const status = (await (
      await fetch(`${api.baseUrl}/v1/scans/${scan_id}`, { headers: { authorization: `Bearer ${key}` } })
    ).json()) as { data: { owner: string } };
    expect(status.data.owner).toBe('dev');
    expect(run.stderr).not.toContain(key);
  });

  it('inspects with --api-key', async () => {
    const run = await runCli(['inspect', api.repoDir, '--api-key', key, '--server', api.baseUrl], { cwd: work });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('README.md');
  });

  it('without a key, or with a revoked one, exit 3 with the API code and its sentence', async () => {
    const none = await runCli(['inspect', api.repoDir, '--server', api.baseUrl], { cwd: work });
    expect(none.code).toBe(3);
    expect(none.stderr).toContain('HTTP 401 API_KEY_MISSING');
    expect(none.stderr).toContain('REPOSCAN_API_KEY');

    const revoked = await runCli(['keys', 'revoke', 'dev', '--file', keyFile], { cwd: work });
    expect(revoked.code, revoked.stderr).toBe(0);
    const run = await runCli(['scan', api.repoDir, '--json', '-o', join(work, 'out-revoked')], {
      cwd: work,
      env: { REPOSCAN_SERVER: api.baseUrl, REPOSCAN_API_KEY: key },
    });
    expect(run.code).toBe(3);
    expect(JSON.parse(run.stdout)).toMatchObject({ error: { exit_code: 3, status: 401, code: 'API_KEY_INVALID' } });
  });
});
