// Secret detection in a scan: with the default (`redact`) no output holds a secret and the
// findings list where each was; `report` keeps the outputs as they were; `off` looks for nothing;
// a tree without secrets gives the same bytes whatever the mode.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine/engine.js';
import type { ScanInput, ScanReport } from '../../src/scan/run-scan.js';
import { runScan } from '../../src/scan/run-scan.js';
import { inspectTree } from '../../src/scan/inspect-tree.js';
import { withTokenCache } from '../../src/tokens/token-cache.js';
import type { TokenCache } from '../../src/tokens/token-cache.js';
import { DEFAULT_ENGINE_LIMITS, DEFAULT_SCAN_OPTIONS } from '../../src/types.js';
import type { ScanOptions } from '../../src/types.js';
import { readZip } from '../scan/read-zip.js';
import { makeTree, MUST_NOT_APPEAR, SECRETS, secretFiles } from './secret-fixture.js';

const engine = createEngine({ tokenThreads: 1 });
afterAll(() => engine.close());

function input(root: string, outDir: string, options: Partial<ScanOptions>): ScanInput {
  return {
    root,
    repoName: 'app',
    source: { type: 'local', url: null, hostFamily: null, ref: null, branch: null, commit: null, subdir: null },
    options: { ...DEFAULT_SCAN_OPTIONS, createZip: true, ...options },
    limits: DEFAULT_ENGINE_LIMITS,
    encoding: 'o200k_base',
    outDir,
  };
}

/** Every output as text: the three digests, each entry of the bundle, and the report as summary.json holds it. */
async function everyOutput(outDir: string, report: ScanReport): Promise<Map<string, string>> {
  const outputs = new Map<string, string>();
  for (const name of await readdir(outDir))
    if (name !== 'output.zip') outputs.set(name, await readFile(join(outDir, name), 'utf8'));
  for (const [name, bytes] of await readZip(join(outDir, 'output.zip')))
    outputs.set(`zip:${name}`, bytes.toString('utf8'));
  outputs.set('report', JSON.stringify(report));
  return outputs;
}

describe('secrets: redact (the default)', () => {
  let tree: Awaited<ReturnType<typeof makeTree>>;
  let report: ScanReport;
  let outputs: Map<string, string>;

  beforeAll(async () => {
    tree = await makeTree(secretFiles());
    report = await engine.runScan(input(tree.root, tree.outDir, {}));
    outputs = await everyOutput(tree.outDir, report);
  });
  afterAll(() => tree.cleanup());

  it('is the default', () => {
    expect(DEFAULT_SCAN_OPTIONS.secrets).toBe('redact');
    expect(report.options.secrets).toBe('redact');
  });

  it('leaves no secret, nor the end of one, in any output', () => {
    expect([...outputs.keys()]).toEqual(
      expect.arrayContaining([
        'output.txt',
        'output.md',
        'output.json',
        'zip:output.txt',
        'zip:summary.json',
        'report',
      ]),
    );
    for (const [name, text] of outputs)
      for (const secret of MUST_NOT_APPEAR)
        expect(text.includes(secret), `${name} holds ${secret.slice(0, 4)}…`).toBe(false);
  });

  it('puts a mark naming the rule where each secret was', () => {
    const txt = outputs.get('output.txt') as string;
    expect(txt).toContain("const GITHUB_TOKEN = '[REDACTED:github]';");
    expect(txt).toContain('aws_access_key_id = [REDACTED:aws]');
    expect(txt).toContain('[REDACTED:privatekey]');
    expect(txt).toContain('Push to [REDACTED:basicauth]/app.git after review.');
    expect(txt).toContain('Nothing secret here.');
  });

  it('lists each finding by path, line and rule, and counts them', () => {
    const secrets = report.secrets;
    expect(secrets?.mode).toBe('redact');
    const where = secrets?.findings.map((f) => `${f.path}:${f.line}:${f.rule}`);
    expect(where).toEqual(
      expect.arrayContaining([
        'config/aws.ini:3:aws',
        'config/aws.ini:4:aws',
        'src/notify.ts:2:github',
        'src/notify.ts:3:slack',
        'src/notify.ts:4:slack',
        'deploy/id_rsa:1:privatekey',
        'deploy/remotes.md:3:basicauth',
        'deploy/remotes.md:5:database-connection-string',
      ]),
    );
    expect(secrets?.count).toBe(secrets?.findings.length);
    expect(secrets?.findings.find((f) => f.rule === 'github')).toMatchObject({ column: 23, kind: 'GITHUB_TOKEN' });
    expect(secrets?.not_checked).toEqual([]);
    // The summary's findings never carry a secret's text, nor its first characters.
    for (const finding of secrets?.findings ?? [])
      expect(Object.keys(finding).sort()).toEqual(['column', 'kind', 'line', 'path', 'rule']);
  });

  it('counts the tokens of the redacted text, and says which files were redacted', () => {
    const notify = report.files.find((f) => f.path === 'src/notify.ts');
    expect(notify?.redactions).toBe(3);
    expect(notify?.size_bytes).toBe(Buffer.byteLength(secretFiles()['src/notify.ts'] as string));
    expect(report.files.find((f) => f.path === 'README.md')?.redactions).toBeUndefined();
    const json = JSON.parse(outputs.get('output.json') as string) as {
      files: Array<{ path: string; content: string; tokens: number }>;
    };
    const rendered = json.files.find((f) => f.path === 'src/notify.ts');
    expect(rendered?.content).toContain('[REDACTED:slack]');
    expect(rendered?.tokens).toBe(notify?.tokens);
  });
});

describe('secrets: report and off', () => {
  it('report lists the same findings and leaves every output as it is', async () => {
    const tree = await makeTree(secretFiles());
    try {
      const report = await engine.runScan(input(tree.root, tree.outDir, { secrets: 'report' }));
      const txt = await readFile(join(tree.outDir, 'output.txt'), 'utf8');
      expect(txt).toContain(SECRETS.github.value);
      expect(txt).not.toContain('[REDACTED:');
      expect(report.secrets?.mode).toBe('report');
      expect(report.secrets?.count).toBeGreaterThanOrEqual(8);
      expect(report.files.every((f) => f.redactions === undefined)).toBe(true);
    } finally {
      await tree.cleanup();
    }
  });

  it('off finds and lists nothing', async () => {
    const tree = await makeTree(secretFiles());
    try {
      const report = await engine.runScan(input(tree.root, tree.outDir, { secrets: 'off' }));
      expect(report.secrets).toBeUndefined();
      expect(await readFile(join(tree.outDir, 'output.txt'), 'utf8')).toContain(SECRETS.github.value);
    } finally {
      await tree.cleanup();
    }
  });

  it('gives a tree without secrets the same artifacts in every mode', async () => {
    const files = { 'README.md': '# Clean\n\nA key = value file follows.\n', 'src/a.ts': 'export const a = 1;\n' };
    const bytes: string[] = [];
    for (const secrets of ['off', 'redact', 'report'] as const) {
      const tree = await makeTree(files);
      try {
        const report = await engine.runScan(input(tree.root, tree.outDir, { secrets, createZip: false }));
        if (secrets !== 'off')
          expect(report.secrets).toEqual({ mode: secrets, count: 0, findings: [], not_checked: [] });
        bytes.push(
          (
            await Promise.all(
              ['output.txt', 'output.md', 'output.json'].map((n) => readFile(join(tree.outDir, n), 'utf8')),
            )
          ).join('\0'),
        );
      } finally {
        await tree.cleanup();
      }
    }
    expect(bytes[1]).toBe(bytes[0]);
    expect(bytes[2]).toBe(bytes[0]);
  });
});

describe('secrets with a token cache, on its own, and in a preview', () => {
  it('caches a redacted file under the redacted text, not the original', async () => {
    const keys = new Map<string, number>();
    const cache: TokenCache = {
      get: (key) => keys.get(Buffer.from(key).toString('hex')),
      set: (key, tokens) => void keys.set(Buffer.from(key).toString('hex'), tokens),
    };
    const tree = await makeTree({ 'src/notify.ts': secretFiles()['src/notify.ts'] as string });
    try {
      const pool = engine.tokenPool('o200k_base');
      await engine.runScan(input(tree.root, tree.outDir, { createZip: false }), { tokenCache: { cache } });
      const { tokenCacheKey } = await import('../../src/tokens/token-cache.js');
      const original = Buffer.from(secretFiles()['src/notify.ts'] as string);
      expect(keys.has(Buffer.from(tokenCacheKey(original)).toString('hex'))).toBe(false);
      expect(keys.size).toBe(1);
      // The same count as counting the redacted text afresh.
      const redacted = await readFile(join(tree.outDir, 'output.json'), 'utf8');
      const content = (JSON.parse(redacted) as { files: Array<{ content: string; tokens: number }> }).files[0];
      const counted = await withTokenCache((c, s) => pool.count(c, s), { get: () => undefined, set: () => {} })([
        Buffer.from(content?.content ?? ''),
      ]);
      expect(counted[0]).toBe(content?.tokens);
    } finally {
      await tree.cleanup();
    }
  });

  it('redacts in a one-shot runScan of a small tree (what a --local scan runs)', async () => {
    const tree = await makeTree(secretFiles());
    try {
      const report = await runScan(input(tree.root, tree.outDir, { createZip: false }));
      const txt = await readFile(join(tree.outDir, 'output.txt'), 'utf8');
      for (const secret of MUST_NOT_APPEAR) expect(txt.includes(secret)).toBe(false);
      expect(report.secrets?.count).toBeGreaterThanOrEqual(8);
    } finally {
      await tree.cleanup();
    }
  });

  it('a preview counts the same findings and writes nothing', async () => {
    const tree = await makeTree(secretFiles());
    try {
      const scan = await engine.runScan(input(tree.root, tree.outDir, { createZip: false, secrets: 'report' }));
      const preview = await inspectTree({ ...input(tree.root, tree.outDir, {}), options: { ...DEFAULT_SCAN_OPTIONS } });
      expect(preview.secrets?.count).toBe(scan.secrets?.count);
      expect(preview.secrets?.findings).toEqual(scan.secrets?.findings);
      const off = await inspectTree({
        ...input(tree.root, tree.outDir, {}),
        options: { ...DEFAULT_SCAN_OPTIONS, secrets: 'off' },
      });
      expect(off.secrets).toBeUndefined();
    } finally {
      await tree.cleanup();
    }
  });

  it('does not check a text over the cap, and says so', async () => {
    const big = `${'x = 1\n'.repeat((2 << 20) / 6 + 10)}${SECRETS.github.value}\n`;
    const tree = await makeTree({ 'big.txt': big, 'small.txt': 'hello\n' });
    try {
      const report = await engine.runScan(input(tree.root, tree.outDir, { createZip: false }));
      expect(report.secrets?.not_checked).toEqual(['big.txt']);
      expect(report.secrets?.count).toBe(0);
    } finally {
      await tree.cleanup();
    }
  });
});
