import { createWriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { finished } from 'node:stream/promises';
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
