// Shared setup for the archive tests: a private scratch folder per test file, zips built on
// the fly (python3's zipfile for crafted ones, archiver for ordinary ones), and assertions.
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { ZipArchive } from 'archiver';
import { expect } from 'vitest';
import { isScanError, type ErrorCode } from '@reposcan/contracts';
import type { ZipLimits } from '../../src/archive/index.js';

export const MiB = 1024 * 1024;

/** The service's default archive limits (docs/api.md). */
export const LIMITS: ZipLimits = {
  maxEntries: 10_000,
  maxUncompressedBytes: 500 * MiB,
  maxRatio: 100,
  maxDepth: 50,
  maxNameBytes: 1024,
  maxComponentBytes: 255,
};

export interface CraftedEntry {
  name: string;
  data?: string;
  /** That many zero bytes instead of `data`, streamed (for bombs). */
  zeros?: number;
  method?: 'stored' | 'deflated' | 'bzip2';
  /** Full st_mode, type bits included (0o120777 is a symlink); 0 looks like a DOS tool's entry. */
  mode?: number;
}

export type Patch =
  | { op: 'encrypt'; index: number }
  | { op: 'shrink'; index: number; size: number }
  | { op: 'set-uncompressed'; index: number; size: number }
  | { op: 'duplicate'; index: number; name: string }
  | { op: 'cover-rest'; index: number }
  /** The UTF-8 flag cleared, as Info-ZIP's zip writes names; `hex`: other name bytes of the same length. */
  | { op: 'legacy-name'; index: number; hex?: string };

export interface CraftSpec {
  entries?: CraftedEntry[];
  many?: number;
  prefix?: number;
  naivePrefix?: number;
  patches?: Patch[];
}

const CRAFT_SCRIPT = fileURLToPath(new URL('./craft_zip.py', import.meta.url));

/**
 * A scratch folder in the real temp dir; afterwards `os.tmpdir()` (TMPDIR) points at an empty
 * folder inside it, so `expectNoTempFiles` sees anything the code under test leaves there.
 * Test files run in separate processes (pool: forks), so the change stays in this file.
 * Also keeps one python3 running for `craft`, which answers one line per zip.
 */
export class Scratch {
  root = '';
  private previousTmpdir: string | undefined;
  private counter = 0;
  private python: ChildProcessByStdio<Writable, Readable, null> | undefined;
  private readonly answers: ((line: string) => void)[] = [];

  async setUp(): Promise<void> {
    this.root = await mkdtemp(path.join(os.tmpdir(), 'reposcan-archive-test-'));
    await mkdir(path.join(this.root, 'tmp'));
    await mkdir(path.join(this.root, 'zips'));
    this.previousTmpdir = process.env.TMPDIR;
    process.env.TMPDIR = path.join(this.root, 'tmp');
    const python = spawn('python3', [CRAFT_SCRIPT], { stdio: ['pipe', 'pipe', 'inherit'] });
    this.python = python;
    createInterface({ input: python.stdout }).on('line', (line) => this.answers.shift()?.(line));
  }

  async tearDown(): Promise<void> {
    if (this.python !== undefined) {
      this.python.stdin.end();
      if (this.python.exitCode === null) await once(this.python, 'exit');
    }
    if (this.previousTmpdir === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = this.previousTmpdir;
    await rm(this.root, { recursive: true, force: true });
  }

  /** A new empty folder, as the caller of extractZip provides. */
  async dest(): Promise<string> {
    const dir = path.join(this.root, `dest-${++this.counter}`);
    await mkdir(dir);
    return dir;
  }

  /** A folder outside every destination, for write-through attempts to aim at. */
  async outside(): Promise<string> {
    const dir = path.join(this.root, `outside-${++this.counter}`);
    await mkdir(dir);
    return dir;
  }

  zipPath(name: string): string {
    return path.join(this.root, 'zips', name);
  }

  async craft(name: string, spec: CraftSpec): Promise<string> {
    const out = this.zipPath(name);
    const { naivePrefix, ...rest } = spec;
    const answer = new Promise<string>((resolve) => this.answers.push(resolve));
    this.python!.stdin.write(`${JSON.stringify({ ...rest, naive_prefix: naivePrefix, out })}\n`);
    expect(await answer).toBe('ok');
    return out;
  }

  /** An ordinary zip as a Node tool writes it. */
  async archive(
    name: string,
    entries: { name: string; data?: string; mode?: number; directory?: boolean }[],
  ): Promise<string> {
    const out = this.zipPath(name);
    const zip = new ZipArchive({ zlib: { level: 6 } });
    for (const entry of entries) {
      zip.append(entry.directory ? '' : (entry.data ?? ''), {
        name: entry.name,
        ...(entry.directory ? { type: 'directory' as const } : {}),
        ...(entry.mode === undefined ? {} : { mode: entry.mode }),
      });
    }
    await Promise.all([pipeline(zip, createWriteStream(out)), zip.finalize()]);
    return out;
  }

  async expectNoTempFiles(): Promise<void> {
    expect(await readdir(path.join(this.root, 'tmp'))).toEqual([]);
  }
}

/** Every path below `dir`, POSIX, sorted; folders end with `/`. */
export async function listTree(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .map((entry) => {
      const relative = path.relative(dir, path.join(entry.parentPath, entry.name)).split(path.sep).join('/');
      return entry.isDirectory() ? `${relative}/` : relative;
    })
    .sort();
}

/** Awaits a refusal and checks its code and that the message says what to do. */
export async function expectScanError(promise: Promise<unknown>, code: ErrorCode): Promise<string> {
  const error = await promise.then(
    () => {
      throw new Error(`expected ${code}, but the call succeeded`);
    },
    (caught: unknown) => caught,
  );
  expect(isScanError(error), String(error)).toBe(true);
  expect((error as { code: string }).code).toBe(code);
  const message = (error as Error).message;
  expect(message).toMatch(/\.$/);
  return message;
}
