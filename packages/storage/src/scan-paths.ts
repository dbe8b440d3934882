import { isScanId, ScanError } from '@reposcan/contracts';

// Names inside DATA_DIR and inside each scan folder. Every path the store builds comes from
// these constants plus a validated scan_id, never from other user input.
export const SCANS_DIR = 'scans';
export const TRASH_DIR = 'trash';
/** Uploads being received, before their scan exists; same volume so adoption is one rename. */
export const INCOMING_DIR = 'incoming';
/** Space set aside so outcomes can be recorded on a full volume (volume-reserve.ts). */
export const RESERVE_FILE = 'reserve.bin';
export const REQUEST_FILE = 'request.json';
export const STATE_FILE = 'state.json';
/** Held by whichever process is updating state.json (see file-lock.ts). */
export const STATE_LOCK = 'state.lock';
export const UPLOAD_FILE = 'upload.zip';
/** The completion webhook's delivery record, written by the delivery job (terminal state.json never changes). */
export const WEBHOOK_FILE = 'webhook.json';
export const CANCEL_MARKER = 'cancel';
/** Completion webhooks of deleted scans, `<scan_id>.json`, kept until delivered (a DELETE removes the scan folder). */
export const KEPT_WEBHOOKS_DIR = 'webhooks';
export const RESULT_DIR = 'result';
/** Token counts by content hash, shared by every worker: `token-cache/v1/<encoding>/`. v1 is the segment format and counting engine; bump it to drop every count. */
export const TOKEN_CACHE_DIR = 'token-cache/v1';

/** The commit cache's index: `commit-cache/v1/<repository key>/<result key>` names a completed scan (commit-cache.ts). */
export const COMMIT_CACHE_DIR = 'commit-cache/v1';
/** Per-file outcomes of earlier scans by repository: `file-cache/v1/<repository key>/<segment>` (file-store.ts). */
export const FILE_CACHE_DIR = 'file-cache/v1';
/** In a scan folder: the commit cache key its result was recorded under. */
export const COMMIT_KEY_FILE = 'commit-key';
/** In a scan folder: what a scan of a later commit needs to carry its outputs forward (carried-scans.ts). */
export const CARRY_FILE = 'carry.json';

/** `work.<attempt>.<random hex>`: one staging folder per job attempt. */
export const STAGING_NAME = /^work\.(\d+)\.[0-9a-f]+$/;

/** The only files that can be addressed inside `result/`. */
export const RESULT_FILE_NAMES = ['output.txt', 'output.md', 'output.json', 'output.zip', 'summary.json'] as const;
/** A part of an output cut by max_tokens_per_part (core's partFileName): a number and a fixed format, nothing else. */
export type PartFileName = `output.part-${number}.${'txt' | 'md' | 'json'}`;
/** What a spliced output is made of (core's spliced-artifact.ts): its description and its pieces. */
export type SplicedFileName = `output.${'txt' | 'md' | 'json'}.${'splice' | `piece-${number}`}`;
export type ResultFileName = (typeof RESULT_FILE_NAMES)[number] | PartFileName | SplicedFileName;
/** Zero-padded to the width of the count (at least 2 digits), never all zeros. */
const PART_FILE_NAME = /^output\.part-(?!0+\.)\d{2,7}\.(?:txt|md|json)$/;
const SPLICED_FILE_NAME = /^output\.(?:txt|md|json)\.(?:splice|piece-(?:0|[1-9]\d{0,5}))$/;

export function isResultFileName(name: unknown): name is ResultFileName {
  return (
    (RESULT_FILE_NAMES as readonly unknown[]).includes(name) ||
    (typeof name === 'string' && (PART_FILE_NAME.test(name) || SPLICED_FILE_NAME.test(name)))
  );
}

/** Throws INVALID_SCAN_ID unless `id` is a lowercase UUID v4; the message never echoes the id (it may be huge or hold NULs). */
export function assertScanId(id: unknown): asserts id is string {
  if (!isScanId(id)) {
    throw new ScanError('INVALID_SCAN_ID', 'A scan_id is the lowercase UUID returned when the scan was accepted.');
  }
}

/** `scans/<id>/result`, relative to DATA_DIR with `/` separators: safe to put in API responses. */
export function artifactDirRelative(id: string): string {
  assertScanId(id);
  return `${SCANS_DIR}/${id}/${RESULT_DIR}`;
}
