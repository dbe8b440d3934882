import type { TextBlock } from '../artifacts/write-text-artifacts.js';
import type { HeadContext, RenderContext, TextFormat } from '../render/render-context.js';
import type { WalkedFile } from '../types.js';
import type { WalkInput } from '../walk/walk-tree.js';
import type { ReadRequest } from './read-file-bytes.js';

/** A step of writing one scan's text artifacts, by the writer's number on the thread that holds it. */
export type ArtifactRequest =
  | { id: number; kind: 'artifacts-open'; writer: number; outDir: string; formats: TextFormat[]; lite: boolean }
  | { id: number; kind: 'artifacts-begin'; writer: number; head: HeadContext }
  | { id: number; kind: 'artifacts-add'; writer: number; blocks: TextBlock[] }
  | { id: number; kind: 'artifacts-finish'; writer: number; ctx: RenderContext }
  | { id: number; kind: 'artifacts-abort'; writer: number };

/**
 * What the io threads are asked: a whole walk (no function may cross, so no acceptFile), a batch
 * of reads, token estimates of a batch of contents, or a step of writing a scan's artifacts.
 */
export type IoRequest =
  | { id: number; kind: 'walk'; input: Omit<WalkInput, 'acceptFile'> }
  | { id: number; kind: 'read'; requests: ReadRequest[]; maxBytes: number }
  | { id: number; kind: 'estimate'; contents: Uint8Array[] }
  | ArtifactRequest;

/** The final answer to a request; a walk sends `partial` chunks of files before it. */
export type IoReply =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: { name: string; message: string; code?: string } }
  | { id: number; partial: WalkedFile[] };
