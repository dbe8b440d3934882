import type { WalkInput } from '../walk/walk-tree.js';
import type { ReadRequest } from './read-file-bytes.js';
import type { CodeLanguage, CodeTransform } from '../compress/code-transform.js';

/**
 * What the io threads are asked: a whole walk (no function may cross, so no acceptFile), a batch of
 * reads, token estimates, a secret check or compressed code of a batch of contents, or the SHA-256
 * of a file being written (appended-file-hash.ts: on to a length, then its digest) or of an output
 * once written (spliced-artifact.ts). A walk sends its files as parts (WalkedFile[]) before its
 * answer.
 */
export type IoRequest =
  | { kind: 'walk'; input: Omit<WalkInput, 'acceptFile'> }
  | { kind: 'read'; requests: ReadRequest[]; maxBytes: number }
  | { kind: 'estimate'; contents: Uint8Array[] }
  | { kind: 'secrets'; contents: Uint8Array[]; names: string[] }
  | { kind: 'compress'; contents: Uint8Array[]; languages: CodeLanguage[]; transform: CodeTransform }
  | { kind: 'hash'; id: number; path: string; length: number }
  | { kind: 'hash-end'; id: number }
  | { kind: 'hash-output'; path: string };
