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
import { tokenCacheKey } from '../../src/tokens/token-cache.js';
import type { TokenCache } from '../../src/tokens/token-cache.js';
import { DEFAULT_ENGINE_LIMITS, DEFAULT_SCAN_OPTIONS } from '../../src/types.js';
import type { ScanOptions } from '../../src/types.js';
import { readZip } from '../scan/read-zip.js';
import { awsKeyId, KEY_ID_ALPHABET, makeTree, MUST_NOT_APPEAR, SECRETS, secretFiles } from './secret-fixture.js';

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
        '.env:3:high-entropy',
        'config/oauth.yaml:2:high-entropy',
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
  it("caches a redacted file's count under the redacted text; the original's key keeps the original's count", async () => {
    const keys = new Map<string, number>();
    const hex = (key: Uint8Array): string => Buffer.from(key).toString('hex');
    const cache: TokenCache = {
      get: (key) => keys.get(hex(key)),
      set: (key, tokens) => void keys.set(hex(key), tokens),
    };
    const original = secretFiles()['src/notify.ts'] as string;
    const tree = await makeTree({ 'src/notify.ts': original });
    try {
      const pool = engine.tokenPool('o200k_base');
      const count = (text: string): Promise<number[]> => pool.count([Buffer.from(text)]);
      await engine.runScan(input(tree.root, tree.outDir, { createZip: false }), { tokenCache: { cache } });
      const json = JSON.parse(await readFile(join(tree.outDir, 'output.json'), 'utf8')) as {
        files: Array<{ content: string; tokens: number }>;
      };
      const shown = json.files[0] as { content: string; tokens: number };
      expect(shown.content).toContain('[REDACTED:github]');
      expect(shown.tokens).toBe((await count(shown.content))[0]);
      expect(keys.get(hex(tokenCacheKey(Buffer.from(shown.content))))).toBe(shown.tokens);
      const originalKey = hex(tokenCacheKey(Buffer.from(original)));
      if (keys.has(originalKey)) expect(keys.get(originalKey)).toBe((await count(original))[0]);
      expect((await count(original))[0]).not.toBe(shown.tokens);
      // A second scan with the same cache counts the same.
      const again = await makeTree({ 'src/notify.ts': original });
      try {
        const report = await engine.runScan(input(again.root, again.outDir, { createZip: false }), {
          tokenCache: { cache },
        });
        expect(report.files[0]?.tokens).toBe(shown.tokens);
      } finally {
        await again.cleanup();
      }
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

  it('redacts in every part of a scan cut into parts, and lists the findings', async () => {
    const tree = await makeTree(secretFiles());
    try {
      const report = await engine.runScan(input(tree.root, tree.outDir, { maxTokensPerPart: 1000 }));
      const outputs = await everyOutput(tree.outDir, report);
      expect([...outputs.keys()]).toEqual(expect.arrayContaining(['output.part-01.txt', 'zip:output.part-01.md']));
      for (const [name, text] of outputs)
        for (const secret of MUST_NOT_APPEAR)
          expect(text.includes(secret), `${name} holds ${secret.slice(0, 4)}…`).toBe(false);
      expect([...outputs.values()].some((text) => text.includes('[REDACTED:github]'))).toBe(true);
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

describe('what a joined check must not change', () => {
  it('finds a GCP key file and an .npmrc token by their names, and a secret in each of many files of a batch', async () => {
    const key = [
      '-----BEGIN ',
      'PRIVATE KEY-----\\nMIIEv',
      'QIBADANBgkqhkiG9w0BAQEFAASC\\n-----END ',
      'PRIVATE KEY-----\\n',
    ].join('');
    const files: Record<string, string> = {
      'gcp/service-account.json': JSON.stringify({
        type: 'service_account',
        private_key_id: 'abc123',
        private_key: key,
      }),
      // Longer than the windows long texts are checked in: a rule parses it whole.
      'gcp-big/service-account.json': JSON.stringify(
        {
          type: 'service_account',
          private_key_id: 'abc123',
          private_key: key,
          notes: Array.from({ length: 6000 }, (_, i) => `note ${i}`),
        },
        null,
        1,
      ),
      '.npmrc': `//registry.npmjs.org/:_authToken=${['npm_', 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8'].join('')}\n`,
    };
    for (let i = 0; i < 40; i++) files[`many/f${i}.ts`] = `// file ${i}\nexport const t = '${SECRETS.github.value}';\n`;
    const tree = await makeTree(files);
    try {
      const report = await engine.runScan(input(tree.root, tree.outDir, { createZip: false, secrets: 'report' }));
      const rules = new Set(report.secrets?.findings.map((f) => `${f.path.split('/')[0]}:${f.rule}`));
      expect(rules).toContain('gcp:gcp');
      expect(rules).toContain('gcp-big:gcp');
      expect(rules).toContain('.npmrc:npm');
      for (let i = 0; i < 40; i++)
        expect(report.secrets?.findings).toContainEqual({
          path: `many/f${i}.ts`,
          line: 2,
          column: 19,
          rule: 'github',
          kind: 'GITHUB_TOKEN',
        });
    } finally {
      await tree.cleanup();
    }
  });

  it('checks a long text window by window: thousands of secrets each found once, and long keys whole', async () => {
    // Put together at run time: distinct key IDs (about 32 characters a line) and private keys
    // with bodies of 8 000 characters (starting as DER does, `MI`), which cover most of the text,
    // so the ends of the windows secretlint is given fall inside keys.
    const body = (b: number): string[] =>
      Array.from(
        { length: 125 },
        (_, l) => `MI${KEY_ID_ALPHABET}${KEY_ID_ALPHABET}`.slice(0, 60) + String(b * 1000 + l).padStart(4, '0'),
      );
    const lines: string[] = [];
    const keyLines: number[] = [];
    for (let block = 0; block < 24; block++) {
      for (let i = 0; i < 150; i++) lines.push(`key_${block}_${i} = ${awsKeyId(block * 150 + i)}`);
      keyLines.push(lines.length + 1);
      lines.push(
        ['-----BEGIN ', 'RSA PRIVATE KEY-----'].join(''),
        ...body(block),
        ['-----END ', 'RSA PRIVATE KEY-----'].join(''),
      );
    }
    const tree = await makeTree({ 'keys.env': `${lines.join('\n')}\n` });
    try {
      const report = await engine.runScan(input(tree.root, tree.outDir, { createZip: false }));
      const findings = report.secrets?.findings ?? [];
      expect(findings.filter((f) => f.rule === 'privatekey').map((f) => f.line)).toEqual(keyLines);
      const idLines = lines.flatMap((line, i) => (line.startsWith('key_') ? [i + 1] : []));
      expect(findings.filter((f) => f.rule === 'aws').map((f) => f.line)).toEqual(idLines);
      expect(findings).toHaveLength(24 + 24 * 150);
      const txt = await readFile(join(tree.outDir, 'output.txt'), 'utf8');
      for (const secret of [awsKeyId(0), awsKeyId(24 * 150 - 1), body(0)[0], body(23)[124]])
        expect(txt).not.toContain(secret as string);
    } finally {
      await tree.cleanup();
    }
  });

  it('checks a line longer than a window in windows too, each secret found once at its column', async () => {
    const keyId = (i: number): string => awsKeyId(i, 'Q7WERTY2');
    const words = Array.from({ length: 4000 }, (_, i) => `id=${keyId(i)}`);
    const tree = await makeTree({ 'one-line.txt': `${words.join(' ')}\n` });
    try {
      const report = await engine.runScan(input(tree.root, tree.outDir, { createZip: false }));
      let at = 0;
      const columns = words.map((word) => {
        const column = at + 1 + 'id='.length;
        at += word.length + 1;
        return column;
      });
      expect(report.secrets?.findings.map((f) => [f.line, f.column, f.rule])).toEqual(
        columns.map((c) => [1, c, 'aws']),
      );
      const txt = await readFile(join(tree.outDir, 'output.txt'), 'utf8');
      expect(txt).not.toContain(keyId(0));
      expect(txt).not.toContain(keyId(3999));
    } finally {
      await tree.cleanup();
    }
  });

  it("keeps an ignore comment of one file from hiding the next file's secrets, and a key cut at a file's end to that file", async () => {
    const tree = await makeTree({
      'a.ts': `// secretlint-disable\nconst ok = '${SECRETS.github.value}';\n`,
      'b.ts': `const t = '${SECRETS.slackToken.value}';\n`,
      'c.pem': SECRETS.privateKey.value.split('\n').slice(0, 2).join('\n'),
      'd.pem': `${SECRETS.privateKey.value.split('\n').slice(2).join('\n')}\n`,
      'e.ts': `const g = '${SECRETS.github.value}';\n`,
    });
    try {
      const report = await engine.runScan(input(tree.root, tree.outDir, { createZip: false, secrets: 'report' }));
      const where = report.secrets?.findings.map((f) => `${f.path}:${f.rule}`);
      expect(where).toContain('b.ts:slack');
      expect(where).toContain('e.ts:github');
      expect(where).not.toContain('a.ts:github');
      expect(where?.filter((w) => w.endsWith(':privatekey'))).toEqual([]);
    } finally {
      await tree.cleanup();
    }
  });
});
