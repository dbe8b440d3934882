import type { WalkedFile } from '../types.js';
import type { WalkInput } from '../walk/walk-tree.js';
import type { ReadRequest } from './read-file-bytes.js';

/** What the io threads are asked: a whole walk (no function may cross, so no acceptFile), a batch of reads, or token estimates of a batch of contents. */
export type IoRequest =
  | { id: number; kind: 'walk'; input: Omit<WalkInput, 'acceptFile'> }
  | { id: number; kind: 'read'; requests: ReadRequest[]; maxBytes: number }
  | { id: number; kind: 'estimate'; contents: Uint8Array[] };

/** The final answer to a request; a walk sends `partial` chunks of files before it. */
export type IoReply =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: { name: string; message: string; code?: string } }
  | { id: number; partial: WalkedFile[] };
