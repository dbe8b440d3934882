import type { WalkInput } from '../walk/walk-tree.js';
import type { ReadRequest } from './read-file-bytes.js';

/** What the io threads are asked: a whole walk (no function may cross, so no acceptFile), or a batch of reads. */
export type IoRequest =
  | { id: number; kind: 'walk'; input: Omit<WalkInput, 'acceptFile'> }
  | { id: number; kind: 'read'; requests: ReadRequest[]; maxBytes: number };

export type IoReply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: { name: string; message: string; code?: string } };
