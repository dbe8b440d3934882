import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseEnv } from 'node:util';
import { ConfigError } from './config-error.js';

// The error its readers catch, so `@reposcan/config/env-file` is all a light entry (the CLI) needs.
export { ConfigError };

/** The file every role reads: `.env` in the working directory the process starts in. */
export const ENV_FILE_NAME = '.env';

const ASSIGNMENT = /^\s*(?:export\s+)?[A-Za-z_][A-Za-z0-9_.-]*\s*=\s*(.*)$/;
const QUOTES = new Set(['"', "'", '`']);

/**
 * The environment with `.env` from `dir` beneath it: a variable set in the environment wins over
 * the file, even when set to an empty string, so a deployment's settings are never replaced by a
 * file someone left in the folder. A missing file is no error. Returns a new object; the process
 * environment is left as it is, so nothing from the file reaches child processes such as git.
 */
export function environmentWithEnvFile(
  env: Record<string, string | undefined> = process.env,
  dir: string = process.cwd(),
): Record<string, string | undefined> {
  const fromFile = readEnvFile(join(dir, ENV_FILE_NAME));
  if (!fromFile) return env;
  const merged: Record<string, string | undefined> = { ...fromFile };
  for (const [name, value] of Object.entries(env)) if (value !== undefined) merged[name] = value;
  return merged;
}

/**
 * Parses an env file with Node's own parser (the one `node --env-file` uses), after checking that
 * every line is a comment, blank, or `NAME=value` (a quoted value may span lines): Node's parser
 * skips or misreads a malformed line without a word, which would leave a setting silently unset.
 * Returns null when the file does not exist.
 */
export function readEnvFile(file: string): Record<string, string> | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new ConfigError([`${file}: cannot be read (${(error as Error).message})`]);
  }
  const problems = malformedLines(text).map(
    (n) => `${file} line ${n}: not NAME=value, a comment (#) or blank; fix or remove the line`,
  );
  if (problems.length > 0) throw new ConfigError(problems);
  return parseEnv(text) as Record<string, string>;
}

/** 1-based numbers of the lines that are neither blank, a comment, nor an assignment. */
function malformedLines(text: string): number[] {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  const bad: number[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    if (/^\s*(#.*)?$/.test(line)) continue;
    const assignment = ASSIGNMENT.exec(line);
    if (!assignment) {
      bad.push(i + 1);
      continue;
    }
    // A value opened with a quote that does not close on its line runs to the line that closes it.
    const value = assignment[1] ?? '';
    const quote = value[0];
    if (quote !== undefined && QUOTES.has(quote) && value.indexOf(quote, 1) === -1) {
      const closing = lines.findIndex((later, j) => j > i && later.includes(quote));
      if (closing !== -1) i = closing;
    }
  }
  return bad;
}
