// The anchors decide which rules run at all, so a rule that can match a text its anchors miss
// would let a secret through. Every rule of the preset must have anchors, and for one example of
// each rule — checked to be a finding of secretlint with every rule — the anchors must name it.
import { Buffer } from 'node:buffer';
import { lintSource } from '@secretlint/core';
import { rules } from '@secretlint/secretlint-rule-preset-recommend';
import type { SecretLintCoreConfig, SecretLintRuleCreator } from '@secretlint/types';
import { describe, expect, it } from 'vitest';
import { HIGH_ENTROPY_ANCHORS, HIGH_ENTROPY_RULE_ID, highEntropyRule } from '../../src/secrets/high-entropy-rule.js';
import { literalScanner } from '../../src/secrets/literal-scanner.js';
import { anchoredRules, RULE_ANCHORS } from '../../src/secrets/rule-anchors.js';
import { SECRETS } from './secret-fixture.js';

const PREFIX = '@secretlint/secretlint-rule-';
const presetRules = rules as SecretLintRuleCreator[];
const anchored = anchoredRules(
  new Map([...Object.entries(RULE_ANCHORS), [HIGH_ENTROPY_RULE_ID, HIGH_ENTROPY_ANCHORS]]),
);

/** `n` characters drawn from `alphabet` by a fixed generator, so examples are random-looking but stable. */
function draw(alphabet: string, n: number, seed = 7): string {
  let x = seed;
  let out = '';
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    out += alphabet[x % alphabet.length];
  }
  return out;
}
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const HEX = '0123456789abcdef';
const join = (...parts: string[]): string => parts.join('');

/** A 1Password service account token's body: base64 of a JSON object, ending in `}` alone (`fQ==`). */
function serviceAccountToken(): string {
  for (let pad = 0; ; pad++) {
    const json = JSON.stringify({
      email: `${'a'.repeat(pad)}@example.com`,
      srpX: draw(HEX, 64),
      salt: draw(ALNUM, 22),
    });
    const base64 = Buffer.from(json).toString('base64');
    if (base64.endsWith('fQ==')) return base64;
  }
}

/** One text per rule holding a secret of that rule's kind, assembled at run time. */
const EXAMPLES: Record<string, { name: string; text: string }> = {
  aws: { name: 'aws.ini', text: `aws_secret_access_key = ${SECRETS.awsSecret.value}\n` },
  gcp: {
    name: 'key.json',
    text: JSON.stringify({
      type: 'service_account',
      private_key_id: draw(HEX, 40),
      private_key: `${SECRETS.privateKey.value}\n`,
      client_email: 'a@b.iam.gserviceaccount.com',
    }),
  },
  npm: { name: 'publish.sh', text: `export TOKEN=${join('npm', '_', draw(ALNUM, 36))}\n` },
  slack: { name: 'notify.ts', text: `const t = '${SECRETS.slackToken.value}';\n` },
  basicauth: { name: 'remotes.md', text: `push to ${SECRETS.basicAuth.value}\n` },
  openai: { name: 'ai.py', text: `key = "${join('sk-', draw(ALNUM, 20), 'T3Blbk', 'FJ', draw(ALNUM, 20, 3))}"\n` },
  anthropic: { name: 'ai.py', text: `key = "${join('sk-ant-', 'api03-', draw(ALNUM, 93), 'AA')}"\n` },
  groq: { name: 'ai.py', text: `key = "${join('gsk', '_', draw(ALNUM, 52))}"\n` },
  huggingface: {
    name: 'ai.py',
    text: `key = "${join('hf', '_', draw('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ', 34))}"\n`,
  },
  linear: { name: 'a.ts', text: `const k = "${join('lin_', 'api_', draw(ALNUM, 40))}";\n` },
  notion: { name: 'a.ts', text: `const k = "${join('ntn', '_', draw('0123456789', 11), draw(ALNUM, 35))}";\n` },
  privatekey: { name: 'id_rsa', text: `${SECRETS.privateKey.value}\n` },
  sendgrid: { name: 'a.ts', text: `const k = "${join('SG', '.', draw(ALNUM, 22), '.', draw(ALNUM, 43))}";\n` },
  shopify: { name: 'a.ts', text: `const k = "${join('shp', 'at_', draw(HEX, 32))}";\n` },
  stripe: { name: 'a.ts', text: `const k = "${join('sk', '_live_', draw(ALNUM, 24))}";\n` },
  github: { name: 'a.ts', text: `const k = "${SECRETS.github.value}";\n` },
  gitlab: { name: 'a.ts', text: `const k = "${join('glp', 'at-', draw(ALNUM, 20))}";\n` },
  grafana: { name: 'a.ts', text: `const k = "${join('gl', 'sa_', draw(ALNUM, 32), '_', draw(HEX, 8))}";\n` },
  '1password': { name: 'a.ts', text: `const k = "${join('ops', '_', serviceAccountToken())}";\n` },
  'database-connection-string': { name: 'a.md', text: `db: ${SECRETS.databaseUrl.value}\n` },
  'hashicorp-vault': { name: 'a.ts', text: `const k = "${join('hv', 's.', draw(ALNUM, 95))}";\n` },
  vercel: { name: 'a.ts', text: `const k = "${join('vc', 'p_', draw(ALNUM, 30))}";\n` },
  databricks: { name: 'a.ts', text: `const k = "${join('da', 'pi', draw(HEX, 32))}";\n` },
  docker: { name: 'a.ts', text: `const k = "${join('dckr', '_pat_', draw(ALNUM, 27))}";\n` },
  figma: { name: 'a.ts', text: `const k = "${join('fi', 'gd_', draw(ALNUM, 40))}";\n` },
  cloudflare: { name: 'a.ts', text: `const k = "${join('cf', 'ut_', draw(ALNUM, 40), draw(HEX, 8))}";\n` },
  tailscale: {
    name: 'a.ts',
    text: `const k = "${join('ts', 'key-', 'auth-', draw(ALNUM, 12), '-', draw(ALNUM, 30))}";\n`,
  },
  'filter-comments': { name: 'a.ts', text: '// secretlint-disable-next-line\n' },
  [HIGH_ENTROPY_RULE_ID]: { name: '.env', text: `DB_PASSWORD=${join('x7Kq9', 'Lm2Vr8', 'Tz4Wp6')}\n` },
};

async function findings(text: string, name: string): Promise<Set<string>> {
  const config: SecretLintCoreConfig = {
    rules: [...presetRules, highEntropyRule].map((rule) => ({
      id: rule.meta.id,
      rule,
      options: rule.meta.id.endsWith('-aws') ? { enableIDScanRule: true } : {},
    })),
  };
  const result = await lintSource({
    source: { filePath: name, ext: name.slice(name.lastIndexOf('.')), content: text, contentType: 'text' },
    options: { config, noPhysicFilePath: true },
  });
  return new Set(result.messages.map((m) => m.ruleId.replace(PREFIX, '')));
}

describe('rule anchors', () => {
  it('cover every rule of the preset', () => {
    const ids = presetRules.map((rule) => rule.meta.id.replace(PREFIX, ''));
    expect(ids.length).toBeGreaterThan(20);
    expect(ids.filter((id) => !(id in RULE_ANCHORS))).toEqual([]);
    expect(Object.keys(RULE_ANCHORS).filter((id) => !ids.includes(id))).toEqual([]);
  });

  it.each(Object.keys(EXAMPLES).filter((rule) => rule !== 'filter-comments'))(
    'name %s for a text secretlint finds its secret in',
    async (rule) => {
      const { name, text } = EXAMPLES[rule] as { name: string; text: string };
      expect(await findings(text, name), 'the example itself').toContain(rule);
      expect(anchored(Buffer.from(text))).toContain(rule);
    },
  );

  it('name secretlint ignore comments, and no rule for text without anchors', () => {
    expect(anchored(Buffer.from(EXAMPLES['filter-comments']?.text ?? ''))).toContain('filter-comments');
    const code = 'export function next(token: Token) {\n  return `https://example.com/${lookup(token).account}`;\n}\n';
    expect([...anchored(Buffer.from(code))]).toEqual([]);
  });

  it('keep the AWS rule to its own casings: "Asia/Tokyo" is not a key ID', () => {
    expect(anchored(Buffer.from('timeZone: "Asia/Tokyo", region: "ap-northeast-1"'))).not.toContain('aws');
    expect(anchored(Buffer.from(`id = ${SECRETS.awsKeyId.value}`))).toContain('aws');
  });

  it("keep the npm rule to a token's shape and a .npmrc's assignment: npm's own variables name no rule", () => {
    const code = [
      'const agent = process.env.npm_config_user_agent;',
      'const { _authToken } = registry;',
      'Try_npm_i_save_dev_types_Slash_1_if_it_exists_or_add_a_new_declaration: diag(7035),',
      '',
    ].join('\n');
    expect([...anchored(Buffer.from(code))]).toEqual([]);
    expect(anchored(Buffer.from('//registry.npmjs.org/:_authToken=abc123\n'))).toContain('npm');
  });
});

describe('the high-entropy rule', () => {
  it('leaves code, words, placeholders and references alone', async () => {
    const text = [
      'token = nextToken2(scanner);',
      'const password = "correct-horse-battery-staple";',
      'api_key: ${{ secrets.API_KEY_PRODUCTION }}',
      'SECRET_KEY=changeme-changeme-changeme',
      'tokenType: TokenType.Identifier1,',
      'access_key = "AAAAAAAAAAAAAAAAAAAA11"',
      '',
    ].join('\n');
    expect(await findings(text, 'settings.py')).not.toContain(HIGH_ENTROPY_RULE_ID);
  });
});

describe('the literal scanner', () => {
  it('finds every occurrence of every literal, overlapping or not, in any ASCII case', () => {
    const literals = ['he', 'she', 'his', 'hers', '://', 'a_b'];
    const text = draw('hesir:/_abHESIR', 20_000, 11);
    const lower = text.toLowerCase();
    const expected: string[] = [];
    for (let at = 0; at < text.length; at++)
      literals.forEach((literal, index) => {
        if (lower.startsWith(literal, at)) expected.push(`${index}@${at}`);
      });
    const found: string[] = [];
    literalScanner(literals).scan(Buffer.from(text), (index, start) => found.push(`${index}@${start}`));
    expect(expected.length).toBeGreaterThan(300);
    expect(found.sort()).toEqual(expected.sort());
  });
});
