import { classifyByName, classifyContent } from '../classify/index.js';
import { hashOnThisThread } from '../io/appended-file-hash.js';
import type { HashAppendedFile } from '../io/appended-file-hash.js';
import { hashOutput } from '../artifacts/spliced-artifact.js';
import type { HashOutput } from '../artifacts/write-text-artifacts.js';
import type { IoThreads } from '../io/io-threads.js';
import { readFilesSync } from '../io/read-file-bytes.js';
import type { ReadOutcome, ReadRequest } from '../io/read-file-bytes.js';
import type { SecretScan } from '../secrets/secret-scan.js';
import type { CodeLanguage, CodeTransform, TransformOutcome } from '../compress/code-transform.js';
import type { SkippedPath, WalkedFile } from '../types.js';
import type { AbsentFileReader } from './absent-file-reader.js';
import type { FileReuse } from './file-reuse.js';
import { syncWalkFs } from '../walk/node-walk-fs.js';
import { walkTreeInto } from '../walk/walk-tree.js';
import type { WalkInput, WalkSink } from '../walk/walk-tree.js';

/** The engine's I/O and heavy helpers, injectable for tests. */
export interface ScanDeps {
  walk: (input: WalkInput, sink: WalkSink, signal?: AbortSignal) => Promise<SkippedPath[]>;
  readFiles: (requests: readonly ReadRequest[], maxBytes: number) => Promise<ReadOutcome[]>;
  /** A preview's token estimates (inspect), off the caller's thread. */
  estimateTokens: (contents: Uint8Array[]) => Promise<number[]> | number[];
  /** Secret findings of a batch of contents, off the caller's thread (a scan or preview with `secrets` on). */
  detectSecrets: (contents: Uint8Array[], names: string[]) => Promise<SecretScan[]>;
  /** Compressed code or comment removal of a batch of contents, off the caller's thread (with `compress` or `remove_comments`). */
  transformCode: (
    contents: Uint8Array[],
    languages: CodeLanguage[],
    transform: CodeTransform,
  ) => Promise<TransformOutcome[]>;
  /** The SHA-256 of each artifact as it is written, off the caller's thread. */
  hashFile: HashAppendedFile;
  /** The SHA-256 of a spliced artifact once it is written, off the caller's thread. */
  hashOutput: HashOutput;
  classifyByName: typeof classifyByName;
  classifyContent: typeof classifyContent;
  now: () => Date;
  /** Files an earlier scan processed (a rescan of a remote repository): taken from there, not read. */
  fileReuse?: FileReuse;
  /** Files not on disk whose bytes the source holds elsewhere (a clone's object store): read from there. */
  readAbsent?: AbsentFileReader;
}

/** The deps that walk and read on `io`'s threads, so the caller's event loop never waits on the disk. */
export function threadScanDeps(io: IoThreads): ScanDeps {
  return {
    walk: io.walk,
    readFiles: io.readFiles,
    estimateTokens: io.estimate,
    detectSecrets: io.detectSecrets,
    transformCode: io.transformCode,
    hashFile: io.hashFile,
    hashOutput: io.hashOutput,
    classifyByName,
    classifyContent,
    now: () => new Date(),
  };
}

/** A one-shot scan walks and reads a tree of at most this many files on the calling thread. */
export const IN_THREAD_TREE_FILES = 2_000;

/**
 * For a one-shot scan (runScan), whose process pays for each thread it starts (30-50 ms a thread on
 * 2 cores, more than a small tree takes to walk and read): a tree of at most `upTo` files is walked
 * and read on the calling thread with the io threads' blocking calls, so no thread starts. A bigger
 * one is walked again on a walk thread and read on file threads, which overlap the walk with the
 * reads (a 50 000-file tree walked on the calling thread took a quarter longer). The first walk holds
 * its files back until it knows, so the sink hears of each file once.
 */
export function smallTreeScanDeps(io: IoThreads, upTo = IN_THREAD_TREE_FILES): ScanDeps {
  const threads = threadScanDeps(io);
  let inThread = true;
  return {
    ...threads,
    async walk(input, sink, signal) {
      signal?.throwIfAborted();
      const held: WalkedFile[] = [];
      const tooBig = new Error(`more than ${upTo} files`);
      const keep = (chunk: WalkedFile[]): void => {
        for (const file of chunk) held.push(file);
        if (held.length > upTo) throw tooBig;
      };
      try {
        const skipped = await walkTreeInto(input, keep, syncWalkFs);
        if (held.length > 0) sink(held);
        return skipped;
      } catch (error) {
        if (error !== tooBig) throw error;
      }
      inThread = false;
      return threads.walk(input, sink, signal);
    },
    readFiles: (requests, maxBytes) =>
      inThread ? Promise.resolve(readFilesSync(requests, maxBytes)) : threads.readFiles(requests, maxBytes),
    // Checked here too, for the same reason: a file thread that starts and loads secretlint at a low
    // priority took longer than checking a small tree (a one-file scan: 0.2-0.4 s more on a busy machine).
    detectSecrets: (contents, names) =>
      inThread
        ? import('../secrets/detect-secrets.js').then((module) => module.detectSecrets(contents, names))
        : threads.detectSecrets(contents, names),
    hashFile: (path) => (inThread ? hashOnThisThread() : threads.hashFile(path)),
    hashOutput: (path) => (inThread ? hashOutput(path) : threads.hashOutput(path)),
  };
}
