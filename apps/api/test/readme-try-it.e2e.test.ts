// README's "Try it" section promises that every line works as written. Its shell blocks run here
// unchanged but for the address, in bash from the repository root, against a service that allows
// local paths under that root (as `ALLOWED_LOCAL_ROOTS=$PWD npm start` does): each command exits
// 0 without an error envelope, and each refusal answers the status and code its comment names.
// The remote example needs the internet and is the one line left out.
import { execFile } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi } from './support/test-runtime.js';
import type { TestApi } from './support/test-runtime.js';
import { codeBlocks, readmeSection, readReadme, REPO_ROOT } from './support/readme.js';

/** Where README's commands write: the download (`-OJ`) into the working folder, the upload's ZIP into /tmp. */
const WRITTEN = [join(REPO_ROOT, 'sample-repo.md'), '/tmp/sample-repo.zip'];
const MARK = '@@readme-command-exit@@';
const run = promisify(execFile);

let api: TestApi;

beforeAll(async () => {
  await Promise.all(WRITTEN.map((file) => rm(file, { force: true })));
  api = await startTestApi({ ALLOWED_LOCAL_ROOTS: REPO_ROOT });
});

afterAll(async () => {
  await api?.close();
  await Promise.all(WRITTEN.map((file) => rm(file, { force: true })));
});

/** The shell blocks of README's "Try it" section, before its first subsection. */
async function tryItBlocks(): Promise<string[]> {
  return codeBlocks(readmeSection(await readReadme(), 'Try it'), 'sh');
}

/** A block's commands, each with the comment lines right above it; continued lines joined. */
function commandsOf(block: string): { command: string; comments: string[] }[] {
  const commands: { command: string; comments: string[] }[] = [];
  let comments: string[] = [];
  let pending = '';
  for (const line of block.split('\n')) {
    if (pending === '' && line.trim() === '') continue;
    if (pending === '' && line.trimStart().startsWith('#')) {
      comments.push(line.trim());
      continue;
    }
    pending += line;
    if (pending.endsWith('\\')) {
      pending = `${pending.slice(0, -1)} `;
      continue;
    }
    commands.push({ command: pending, comments });
    comments = [];
    pending = '';
  }
  return commands;
}

/** The block's comments under each command (`#  403 CODE`), by command. */
function refusalsOf(block: string): { command: string; status: number; code: string }[] {
  const refusals: { command: string; status: number; code: string }[] = [];
  const lines = block.split('\n').filter((line) => line.trim() !== '');
  for (const [i, line] of lines.entries()) {
    const expected = /^#\s+(\d{3}) ([A-Z_]+)$/.exec(line.trim());
    if (expected)
      refusals.push({ command: lines[i - 1] as string, status: Number(expected[1]), code: expected[2] as string });
  }
  return refusals;
}

/** Runs `commands` in one bash from the repository root; each one's output and exit code. */
async function runInBash(commands: string[]): Promise<{ output: string; exit: number }[]> {
  const script = commands.map((c) => `${c}\nprintf '\\n${MARK}%d\\n' "$?"`).join('\n');
  const { stdout } = await run(
    'bash',
    ['-o', 'pipefail', '-c', script.replaceAll('localhost:8000', api.baseUrl.replace('http://', ''))],
    { cwd: REPO_ROOT, timeout: 90_000, maxBuffer: 16 << 20 },
  );
  const parts = stdout.split(new RegExp(`\\n${MARK}(\\d+)\\n`));
  const results: { output: string; exit: number }[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2)
    results.push({ output: parts[i] as string, exit: Number(parts[i + 1]) });
  return results;
}

describe("README's Try it", () => {
  it('every command of the example block works as written (but the one that needs the internet)', async () => {
    const [, examples] = await tryItBlocks();
    const commands = commandsOf(examples as string).filter(
      ({ comments }) => !comments.some((comment) => comment.includes('needs internet')),
    );
    expect(commands.length).toBeGreaterThanOrEqual(10);
    const results = await runInBash(commands.map((c) => c.command));
    expect(results).toHaveLength(commands.length);
    for (const [i, { output, exit }] of results.entries()) {
      const { command } = commands[i] as { command: string };
      expect({ command, exit }).toEqual({ command, exit: 0 });
      expect(output, command).not.toContain('"status":"error"');
      if (command.includes('/events')) expect(output, command).toMatch(/event: state[\s\S]*"state":"completed"/);
      if (command.includes('/metrics')) expect(output, command).toContain('# TYPE reposcan_');
      if (command.startsWith('curl -s -X POST') || command.startsWith('curl -s -F'))
        expect(JSON.parse(output), command).toMatchObject({ status: 'success' });
    }
    const download = await readFile(WRITTEN[0] as string, 'utf8');
    expect(download).toContain('sample-repo');
  });

  it('every refusal answers the status and code its comment names', async () => {
    const [, , refusalBlock] = await tryItBlocks();
    const refusals = refusalsOf(refusalBlock as string);
    expect(refusals.length).toBeGreaterThanOrEqual(4);
    const results = await runInBash(refusals.map((r) => `${r.command} -w '\\n%{http_code}'`));
    for (const [i, { output, exit }] of results.entries()) {
      const { command, status, code } = refusals[i] as (typeof refusals)[number];
      expect(exit, command).toBe(0);
      const [body, answered] = [output.slice(0, output.lastIndexOf('\n')), output.slice(output.lastIndexOf('\n') + 1)];
      expect({ command, status: Number(answered), code: (JSON.parse(body) as { code?: string }).code }).toEqual({
        command,
        status,
        code,
      });
    }
  });
});
