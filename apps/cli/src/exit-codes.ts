// Exit codes a script can rely on. README and `reposcan --help` list the same table.
export const EXIT = {
  /** The scan or inspection finished and every requested file was written. */
  OK: 0,
  /** Something unexpected (a bug); the message says what. */
  UNEXPECTED: 1,
  /** Bad command line: unknown option, missing target, a value of the wrong form. */
  USAGE: 2,
  /** The API refused the request (a 4xx answer): its code and sentence are printed. */
  REFUSED: 3,
  /** The scan ran and ended failed or cancelled: its error code and message are printed. */
  SCAN_FAILED: 4,
  /** The server could not be reached, is not a reposcan API, answered 5xx, or sent a download that fails its checksum. */
  UNAVAILABLE: 5,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** A bad command line; the message says what to change. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** A scan that reached a terminal state other than completed. */
export class ScanEndedError extends Error {
  override readonly name = 'ScanEndedError';
  constructor(
    readonly scanId: string | null,
    readonly state: 'failed' | 'cancelled',
    readonly code: string,
    readonly detail: string,
  ) {
    super(`scan ${state}: ${code}: ${detail}`);
  }
}
