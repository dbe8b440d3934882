import { readFile, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import {
  API_KEY_NAME,
  API_KEY_NAME_RULE,
  apiKeyRecord,
  formatApiKeyLine,
  generateApiKey,
  parseApiKeyFile,
} from '@reposcan/config/api-keys';
import { withFileLock, writeFileAtomic } from '@reposcan/storage';
import type { KeysArgs } from '../cli-args.js';
import type { CliIo } from '../cli-io.js';
import { UsageError } from '../exit-codes.js';

/** Two `keys` commands at once must not lose each other's change: the rewrite runs under a lock beside the file. */
const LOCK_TIMING = { staleMs: 10_000, waitMs: 15_000 };

/**
 * `reposcan keys add|revoke|list`. The file is rewritten whole, by a rename (the servers see the
 * old file or the new one, never half of it), keeping every other line, comments included.
 */
export async function keys(args: KeysArgs, io: CliIo): Promise<void> {
  const file = resolve(io.cwd, args.file);
  if (args.action === 'list') return list(file, io);
  if (!API_KEY_NAME.test(args.name)) throw new UsageError(`a key's name is ${API_KEY_NAME_RULE}; got "${args.name}".`);
  await stat(dirname(file)).catch(() => {
    throw new UsageError(`the folder of the key file ${file} does not exist; create it first.`);
  });
  await withFileLock(`${file}.lock`, LOCK_TIMING, async () => {
    const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT' && args.action === 'add') return '';
      throw error.code === 'ENOENT' ? new UsageError(`there is no key file ${file}.`) : error;
    });
    const lines = text === '' ? [] : text.replace(/\r?\n$/, '').split(/\r?\n/);
    const own = (line: string) => line.trim().split(/\s+/)[0] === args.name && !line.trim().startsWith('#');
    const mode = await stat(file).then(
      (s) => s.mode & 0o777,
      () => 0o600,
    );
    if (args.action === 'add') {
      if (lines.some(own))
        throw new UsageError(
          `${file} has a key named ${args.name} already; revoke it first (reposcan keys revoke ${args.name}) or choose another name.`,
        );
      const key = generateApiKey();
      const line = formatApiKeyLine(
        apiKeyRecord(args.name, key, { admin: args.admin, rate: args.rate, inspect: args.inspect }),
      );
      await writeFileAtomic(file, `${[...lines, line].join('\n')}\n`, mode);
      // stdout gets the key alone, so `reposcan keys add NAME > secret` or a pipe takes exactly it.
      io.stdout.write(`${key}\n`);
      io.stderr.write(
        `reposcan: added the key ${args.name}${args.admin ? ' (scope=admin)' : ''} to ${file}. It is shown this once: store it now.\n`,
      );
      return;
    }
    const kept = lines.filter((line) => !own(line));
    if (kept.length === lines.length) throw new UsageError(`${file} has no key named ${args.name}.`);
    await writeFileAtomic(file, kept.length === 0 ? '' : `${kept.join('\n')}\n`, mode);
    io.stderr.write(`reposcan: revoked the key ${args.name} in ${file}; servers refuse it from their next request.\n`);
  });
}

async function list(file: string, io: CliIo): Promise<void> {
  const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    throw error.code === 'ENOENT' ? new UsageError(`there is no key file ${file}.`) : error;
  });
  const { keys, problems } = parseApiKeyFile(text);
  for (const k of keys)
    io.stdout.write(
      `${[k.name, k.admin ? 'scope=admin' : 'scope=user', ...(k.rate === null ? [] : [`rate=${k.rate}`]), ...(k.inspect === null ? [] : [`inspect=${k.inspect}`])].join(' ')}\n`,
    );
  for (const problem of problems) io.stderr.write(`reposcan: ${file} ${problem} (the server leaves it out)\n`);
}
