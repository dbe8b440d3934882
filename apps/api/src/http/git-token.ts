import type { Request } from 'express';
import { GIT_TOKEN_HEADER, GitToken, ScanError } from '@reposcan/contracts';
import { gitTokenNotAccepted } from '../services/source-check.js';

/**
 * The request's git credential: `git_token` from the body, or the X-Git-Token header. Checked
 * against the same schema either way; the error never repeats the value.
 */
export function gitTokenOf(req: Request, fromBody: string | undefined): string | undefined {
  const header = req.get(GIT_TOKEN_HEADER);
  if (header === undefined) return fromBody;
  if (fromBody !== undefined)
    throw new ScanError(
      'INVALID_REQUEST',
      `Send the git token once: in git_token or in the ${GIT_TOKEN_HEADER} header, not both.`,
    );
  if (!GitToken.safeParse(header).success)
    throw new ScanError(
      'INVALID_REQUEST',
      `Fix the ${GIT_TOKEN_HEADER} header: a token or user:token, printable ASCII without blanks, up to 4096 characters.`,
    );
  return header;
}

/** Uploads clone nothing: a git token there is refused before the body is read. */
export function refuseGitToken(req: Request): void {
  if (req.get(GIT_TOKEN_HEADER) !== undefined || (typeof req.query === 'object' && 'git_token' in req.query))
    throw gitTokenNotAccepted('an uploaded archive');
}
