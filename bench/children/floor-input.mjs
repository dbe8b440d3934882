// What the floors count: the files the engine would count, chosen, read and classified by the
// engine's own walk and classification (so the set and the UTF-8 bytes are the engine's), copied
// into one SharedArrayBuffer as the engine's read ring holds them (threads read it without a copy),
// and cut into the engine's batch shape: at most 50 files or about 1 MB. None of this is timed.
import { readFile } from 'node:fs/promises';
import { DEFAULT_ENGINE_LIMITS, DEFAULT_SCAN_OPTIONS, classifyContent, walkTree } from '@reposcan/core';

/** @param {string} root */
export async function floorInput(root) {
  const limits = { ...DEFAULT_ENGINE_LIMITS, maxFiles: 10_000_000 };
  const walked = await walkTree({ root, subdir: null, options: DEFAULT_SCAN_OPTIONS, limits });
  const contents = [];
  for (const file of walked.files) {
    const result = classifyContent(file.path, new Uint8Array(await readFile(file.absPath)));
    if (result.textual) contents.push(result.content);
  }
  const total = contents.reduce((sum, c) => sum + c.length, 0);
  const shared = new Uint8Array(new SharedArrayBuffer(total));
  const views = [];
  let offset = 0;
  for (const c of contents) {
    shared.set(c, offset);
    views.push(shared.subarray(offset, offset + c.length));
    offset += c.length;
  }
  const batches = [];
  let batch = [];
  let batchBytes = 0;
  for (const view of views) {
    batch.push(view);
    batchBytes += view.length;
    if (batch.length === 50 || batchBytes >= 1_000_000) {
      batches.push(batch);
      batch = [];
      batchBytes = 0;
    }
  }
  if (batch.length > 0) batches.push(batch);
  return { views, total, batches };
}
