// `reposcan scan --local --compress signatures --remove-comments`: the written digest holds the
// compressed code, stderr says how many code files were transformed, `--json` carries the
// compression block; a wrong mode is a usage error.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTree } from '../../../packages/core/test/secrets/secret-fixture.js';
import { runCli } from './support/cli-process.js';

interface Outcome {
  result: { compression?: { files: number; tokens_before: number; tokens_after: number } };
  files: Array<{ format: string; path: string }>;
}

describe('reposcan scan --local --compress', () => {
  let tree: Awaited<ReturnType<typeof makeTree>>;
  let work: string;
  beforeAll(async () => {
    tree = await makeTree({
      'src/app.go': 'package app\n\n// Run runs.\nfunc Run() int {\n\t// count\n\treturn 1 + 1\n}\n',
      'notes.txt': 'func Run() int { return 2 }\n',
    });
    work = await mkdtemp(join(tmpdir(), 'reposcan-cli-compress-'));
  });
  afterAll(async () => {
    await tree.cleanup();
    await rm(work, { recursive: true, force: true });
  });

  it('writes the compressed code and says so', async () => {
    const run = await runCli(
      ['scan', '--local', tree.root, '--compress', 'signatures', '--remove-comments', '--json', '-o', join(work, 'a')],
      { cwd: work },
    );
    expect(run.code, run.stderr).toBe(0);
    const outcome = JSON.parse(run.stdout) as Outcome;
    expect(outcome.result.compression?.files).toBe(1);
    const txt = await readFile(outcome.files.find((f) => f.format === 'txt')!.path, 'utf8');
    expect(txt).toContain('package app\n\n// Run runs.\nfunc Run() int { ⋯ }\n');
    expect(txt).toContain('func Run() int { return 2 }\n');

    const plain = await runCli(['scan', '--local', tree.root, '--compress', 'signatures', '-o', join(work, 'b')], {
      cwd: work,
    });
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stderr).toMatch(/1 code file transformed: \d+ -> \d+ tokens \(-\d+ %\)/);
  });

  it('refuses a mode it does not know', async () => {
    const wrong = await runCli(['scan', '--local', tree.root, '--compress', 'bodies'], { cwd: work });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('--compress must be one of none, signatures; got "bodies".');
  });
});
