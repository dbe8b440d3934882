// A repository holding one secret of each kind the tests look for. Every secret is put together
// at run time from pieces, so no file of this repository holds one a scanner would flag.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const join2 = (...parts: string[]): string => parts.join('');

/** The 32 letters and digits of AWS key IDs. */
export const KEY_ID_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** The `i`-th of a run of distinct AWS access key IDs (`middle`: 8 of its characters), put together at run time. */
export function awsKeyId(i: number, middle = 'Z3MHJ2QX'): string {
  const tail = Array.from({ length: 8 }, (_, k) => KEY_ID_ALPHABET[(i >> (5 * k)) % 32]).join('');
  return join2('AK', 'IA', middle, tail);
}

/** Each secret by name, with the rule expected to find it. */
export const SECRETS = {
  awsKeyId: { value: join2('AKIA', 'Z3MHJ2QX', 'LVBN7K4P'), rule: 'aws' },
  awsSecret: { value: join2('q8Jm2vR7tL', '0xWpZ4nK9s', 'Yb3Hc6Fd1G', 'eA5uQiTzNo'), rule: 'aws' },
  github: { value: join2('gh', 'p_', 'wWPw5k4aXcaT4fNP0Uc', 'nZwJUVFk6LO0pINUx'), rule: 'github' },
  slackToken: {
    value: join2('xox', 'b-', '1234567890123-', '1234567890123-', 'aBcDeFgHiJkLmNoPqRsTuVwX'),
    rule: 'slack',
  },
  slackWebhook: {
    value: join2('https://hooks.slack', '.com/services/', 'T01ABCDEF/B01ABCDEF/', 'abcdefghijklmnopqrstuvwx'),
    rule: 'slack',
  },
  privateKey: {
    value: [
      join2('-----BEGIN ', 'RSA PRIVATE KEY-----'),
      join2('MIIEowIBAAKCAQEA', 'u1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun'),
      join2('VTLw7onLRnrq0', '/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxKLxoS2tFczGkPLPgizskuemMghRniWaoLcyeh'),
      join2('-----END ', 'RSA PRIVATE KEY-----'),
    ].join('\n'),
    rule: 'privatekey',
  },
  /** No service's prefix: found by its name and its randomness (the high-entropy rule). */
  genericPassword: { value: join2('v7Rt2', 'Xq9Lk4', 'Wm8Zp3N'), rule: 'high-entropy' },
  genericClientSecret: { value: join2('0c1f5a9e', '7b3d4c2a', '8e6f1b0d', '9a7c5e3f'), rule: 'high-entropy' },
  basicAuth: { value: join2('https://deploy:', 'Hx7pQ2kV9mRw', '@git.example.com/app.git'), rule: 'basicauth' },
  databaseUrl: {
    value: join2('postgres://app:', 'N8sK2mQ4vX7z', '@db.example.com:5432/prod'),
    rule: 'database-connection-string',
  },
} as const;

/** The parts of each secret that must never reach an output (a private key's body line, not its armour). */
export const MUST_NOT_APPEAR: string[] = [
  SECRETS.awsKeyId.value,
  SECRETS.awsSecret.value,
  SECRETS.awsSecret.value.slice(-16),
  SECRETS.github.value,
  SECRETS.slackToken.value,
  SECRETS.slackWebhook.value,
  ...SECRETS.privateKey.value.split('\n').slice(1, 3),
  'Hx7pQ2kV9mRw',
  'N8sK2mQ4vX7z',
  SECRETS.genericPassword.value,
  SECRETS.genericClientSecret.value,
];

/** The files of the repository, by path. */
export function secretFiles(): Record<string, string> {
  return {
    'config/aws.ini': [
      '[default]',
      'region = eu-west-1',
      `aws_access_key_id = ${SECRETS.awsKeyId.value}`,
      `aws_secret_access_key = ${SECRETS.awsSecret.value}`,
      '',
    ].join('\n'),
    'src/notify.ts': [
      '// Sends build results.',
      `const GITHUB_TOKEN = '${SECRETS.github.value}';`,
      `const SLACK_TOKEN = "${SECRETS.slackToken.value}";`,
      `export const hook = '${SECRETS.slackWebhook.value}';`,
      '',
    ].join('\n'),
    'deploy/id_rsa': `${SECRETS.privateKey.value}\n`,
    'deploy/remotes.md': `# Remotes\n\nPush to ${SECRETS.basicAuth.value} after review.\n\nDatabase: \`${SECRETS.databaseUrl.value}\`\n`,
    '.env': `# Local settings\nDB_HOST=localhost\nDB_PASSWORD=${SECRETS.genericPassword.value}\n`,
    'config/oauth.yaml': `client_id: reposcan-app\nclient_secret: "${SECRETS.genericClientSecret.value}"\n`,
    'README.md': '# App\n\nNothing secret here.\n',
  };
}

/** A repository of `files` in a temporary folder, with an empty `out` folder beside it. */
export async function makeTree(files: Record<string, string>): Promise<{
  root: string;
  outDir: string;
  cleanup: () => Promise<void>;
}> {
  const base = await mkdtemp(join(tmpdir(), 'reposcan-secrets-'));
  const root = join(base, 'repo');
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), content);
  }
  const outDir = join(base, 'out');
  await mkdir(outDir);
  return { root, outDir, cleanup: () => rm(base, { recursive: true, force: true }) };
}
