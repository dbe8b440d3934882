import { createHash } from 'node:crypto';
import { constants, createWriteStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { Transform } from 'node:stream';
import type { Readable } from 'node:stream';
import type * as Archiver from 'archiver';
import { finished } from 'node:stream/promises';
import { isAt } from '../io/proven-path.js';
import { fsPath } from '../path-bytes.js';

// archiver and the CommonJS modules under it cost 0.1-0.15 s of CPU to import (Node's lexer reads
// each one for its exports), paid by every process and thread that imports the engine: most never
// write a bundle (a scan without create_zip, inspect threads, the CLI), so it loads on first use.
let archiver: Promise<typeof Archiver> | undefined;

/**
 * The folder of the bundle that holds the repository's files, at their paths in the repository.
 * Everything else in the bundle is the scan's own and sits at the top, so no path of the
 * repository (its own `manifest.json`, `README.md` or `assets/`) can be mistaken for one of them.
 */
export const BUNDLE_REPOSITORY_DIR = 'repository';

interface ZipSourceFile {
  /** Entry name inside the archive (POSIX). */
  name: string;
  absPath: string;
  /** A file of the scanned tree, `absPath` its real path: not read unless the file opened is there. */
  fromTree?: boolean;
}

export interface ZipBundleInput {
  outPath: string;
  /** The scan's own files (the outputs), at the top of the bundle under their names. */
  files: Array<{ name: string; absPath: string }>;
  /** Files of the scanned tree: `path` relative to its root, `absPath` its real path. */
  treeFiles: Array<{ path: string; absPath: string }>;
  /** Small generated entries (summary.json, README.md), at the top too. */
  documents: Array<{ name: string; content: string }>;
  /** Entry timestamp: the scan's time, so the bundle does not depend on file mtimes. */
  date: Date;
}

export interface ZipBundleResult {
  bytes: number;
  sha256: string;
  entries: number;
}

interface ManifestEntry {
  path: string;
  bytes: number;
  sha256: string;
}

// Hashes what passes through, so the manifest describes exactly the bytes that were zipped.
function hashing(entry: ManifestEntry): Transform {
  const hash = createHash('sha256');
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      entry.bytes += chunk.length;
      done(null, chunk);
    },
    flush(done) {
      entry.sha256 = hash.digest('hex');
      done();
    },
  });
}

async function openNoFollow(file: ZipSourceFile): Promise<Readable> {
  // O_NOFOLLOW: a path swapped for a symlink after the walk must not be read through; nor may a
  // folder on the way (proven-path.ts).
  const handle = await open(fsPath(file.absPath), constants.O_RDONLY | constants.O_NOFOLLOW);
  if (file.fromTree === true && !(await isAt(handle.fd, file.absPath))) {
    await handle.close();
    throw Object.assign(new Error(`${file.name} is no longer where the scan found it`), { code: 'EMOVED' });
  }
  return handle.createReadStream();
}

/**
 * The ZIP bundle: at the top the outputs, summary and README, and `manifest.json` listing every
 * other entry with its size and sha256; the repository's files under BUNDLE_REPOSITORY_DIR.
 * Streams every entry; nothing is held whole in memory.
 */
export async function writeZipBundle(input: ZipBundleInput): Promise<ZipBundleResult> {
  const own = [...input.documents.map((d) => d.name), ...input.files.map((f) => f.name), 'manifest.json'];
  for (const name of own) {
    if (name.includes('/') || name === BUNDLE_REPOSITORY_DIR || own.indexOf(name) !== own.lastIndexOf(name))
      throw new Error(`The bundle's own entry ${name} must be a distinct name at the top`);
  }
  const { ZipArchive } = await (archiver ??= import('archiver'));
  const archive = new ZipArchive({ zlib: { level: 6 } });
  const output = createWriteStream(input.outPath, { flags: 'wx' });
  const done = finished(output);
  const failed = new Promise<never>((_, reject) => {
    archive.on('error', reject);
    archive.on('warning', reject);
  });
  const whole: ManifestEntry = { path: input.outPath, bytes: 0, sha256: '' };
  archive.pipe(hashing(whole)).pipe(output);
  const manifest: ManifestEntry[] = [];
  const date = input.date;

  const add = async (name: string, source: Readable): Promise<void> => {
    const entry: ManifestEntry = { path: name, bytes: 0, sha256: '' };
    manifest.push(entry);
    const hashed = source.pipe(hashing(entry));
    source.on('error', (error) => hashed.destroy(error));
    archive.append(hashed, { name, date });
    // Wait for this entry before queueing the next, so only one file is open at a time.
    await Promise.race([finished(hashed), failed]);
  };

  try {
    for (const doc of input.documents) {
      const entry: ManifestEntry = { path: doc.name, bytes: 0, sha256: '' };
      const bytes = Buffer.from(doc.content, 'utf8');
      entry.bytes = bytes.length;
      entry.sha256 = createHash('sha256').update(bytes).digest('hex');
      manifest.push(entry);
      archive.append(bytes, { name: doc.name, date });
    }
    for (const file of input.files) await add(file.name, await openNoFollow(file));
    for (const file of input.treeFiles) {
      const name = `${BUNDLE_REPOSITORY_DIR}/${file.path}`;
      await add(name, await openNoFollow({ name, absPath: file.absPath, fromTree: true }));
    }
    manifest.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    archive.append(`${JSON.stringify({ files: manifest }, null, 2)}\n`, { name: 'manifest.json', date });
    await Promise.race([archive.finalize(), failed]);
    await Promise.race([done, failed]);
  } catch (error) {
    archive.abort();
    output.destroy();
    throw error;
  }
  return { bytes: whole.bytes, sha256: whole.sha256, entries: manifest.length + 1 };
}
