import { spawnSync } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { finished } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { ZipArchive } from 'archiver';

/** A real ZIP of `entries` (name → content), written with archiver, returned as bytes. */
export async function buildZip(path: string, entries: Record<string, string | Buffer>): Promise<Buffer> {
  const archive = new ZipArchive({ zlib: { level: 6 } });
  const out = createWriteStream(path);
  archive.pipe(out);
  for (const [name, content] of Object.entries(entries)) archive.append(content, { name });
  await archive.finalize();
  await finished(out);
  return readFile(path);
}

const CRAFT_SCRIPT = fileURLToPath(new URL('../../../../packages/sources/test/archive/craft_zip.py', import.meta.url));

/**
 * A crafted (often malicious) ZIP from the archive tests' independent writer (python3 zipfile
 * plus byte patches); `spec` is craft_zip.py's, e.g. `{ entries: [{ name, data, mode }], patches }`.
 */
export function craftZip(out: string, spec: Record<string, unknown>): Buffer {
  const result = spawnSync('python3', [CRAFT_SCRIPT], {
    input: `${JSON.stringify({ ...spec, out })}\n`,
    encoding: 'utf8',
  });
  if (result.stdout.trim() !== 'ok') throw new Error(`craft_zip.py failed: ${result.stderr}`);
  return readFileSync(out);
}
