import { randomUUID } from 'node:crypto';
import { rename, rm } from 'node:fs/promises';
import { Router } from 'express';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import multer from 'multer';
import { ScanError, UploadQuery } from '@reposcan/contracts';
import { baseRefNotSupported, checkZip } from '@reposcan/sources';
import type { ZipLimits } from '@reposcan/sources';
import type { ScanStore } from '@reposcan/storage';
import { callerOf } from '../http/api-keys.js';
import { refuseGitToken } from '../http/git-token.js';
import { clientOf } from '../http/rate-limit.js';
import { parseOrThrow } from '../http/validate.js';
import type { ScanService } from '../services/scan-service.js';
import { methodNotAllowed } from './method-not-allowed.js';
import { respondToSubmission, wantsToWait } from './respond-to-submission.js';

export interface UploadRouteDeps {
  scans: ScanService;
  store: ScanStore;
  maxUploadBytes: number;
  /** The worker's extraction limits: an archive it would refuse is refused here, before queueing. */
  archiveLimits: ZipLimits;
  waitMs: number;
  limiter: RequestHandler;
}

export function uploadRoutes(deps: UploadRouteDeps): Router {
  const router = Router();
  const upload = multer({
    storage: multer.diskStorage({
      destination: (_req, _file, cb) => cb(null, deps.store.incomingDir()),
      filename: (_req, _file, cb) => cb(null, `${randomUUID()}.zip.part`),
    }),
    limits: { fileSize: deps.maxUploadBytes, files: 1, fields: 0, parts: 1, headerPairs: 20 },
    // Browsers and curl send a file name's bytes as UTF-8; read as latin1 (multer's default),
    // `café.zip` became `cafÃ©`.
    defParamCharset: 'utf8',
    // Synchronous on purpose: async filters interplay badly with the size limit (multer advisories).
    fileFilter: (_req, file, cb) => {
      if (file.fieldname !== 'file') cb(new multer.MulterError('LIMIT_UNEXPECTED_FILE', file.fieldname));
      else cb(null, true);
    },
  });
  // Refuse an oversized body from its Content-Length before reading a byte of it.
  const declaredSize: RequestHandler = (req, _res, next) => {
    refuseGitToken(req);
    // An archive has no history to diff: refused before the body is read.
    if (typeof req.query === 'object' && 'base_ref' in req.query) throw baseRefNotSupported('upload');
    const length = Number(req.get('content-length') ?? 0);
    if (length > deps.maxUploadBytes + 64 * 1024) {
      return next(
        new ScanError(
          'UPLOAD_TOO_LARGE',
          `The upload is larger than the server accepts (${deps.maxUploadBytes} bytes). Upload a smaller ZIP, or leave build output and dependencies out of it.`,
        ),
      );
    }
    if (!req.is('multipart/form-data')) {
      return next(
        new ScanError(
          'UNSUPPORTED_MEDIA_TYPE',
          'Send the archive as multipart/form-data with the file in the field `file`.',
        ),
      );
    }
    next();
  };
  const receiveFile = receiveMultipart(upload.single('file'));

  router
    .route('/v1/upload')
    .post(deps.limiter, declaredSize, receiveFile, async (req, res) => {
      const part = req.file?.path;
      try {
        const { wait, callback_url, ...options } = parseOrThrow(UploadQuery, req.query, 'query');
        if (!req.file || !part)
          throw new ScanError('INVALID_REQUEST', 'Send the .zip archive in the multipart form field `file`.');
        const callbackUrl = await deps.scans.checkCallbackUrl(callback_url);
        await checkZip(part, deps.archiveLimits);
        await deps.scans.assertDiskRoom();
        const fileName = cleanUploadName(req.file.originalname);
        const state = await deps.scans.submit({ type: 'upload', file_name: fileName }, options, {
          client: clientOf(req),
          owner: callerOf(req)?.name ?? null,
          beforeEnqueue: (scanId) => rename(part, deps.store.uploadPath(scanId)),
          callbackUrl,
        });
        await respondToSubmission(req, res, deps.scans, state.scan_id, wantsToWait(req, wait), deps.waitMs);
      } finally {
        // Nothing received is left behind when the request fails; after a rename this is a no-op.
        if (part) await rm(part, { force: true });
      }
    })
    .all(methodNotAllowed(['POST']));
  return router;
}

/**
 * Multer, with the multipart parser's own complaints turned into 400 INVALID_MULTIPART. busboy
 * reports a missing boundary, a body that ends before its closing boundary or a malformed part
 * header as plain errors, which would otherwise be answered as our own failure (500). Multer's
 * limit errors keep their codes; an errno once the whole body has arrived (the disk under
 * `incoming/`) is ours, one from a client that went away mid-body (ECONNRESET) is not. Multer
 * has removed what it wrote of the part before it hands an error on.
 */
function receiveMultipart(parse: RequestHandler): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    void parse(req, res, (error?: unknown) => {
      if (error === undefined || error === null) return next();
      const e = error as { name?: unknown; code?: unknown };
      if (e.name === 'MulterError' || (typeof e.code === 'string' && req.complete)) return next(error);
      next(
        new ScanError(
          'INVALID_MULTIPART',
          'The multipart/form-data body could not be read: it needs a boundary in its Content-Type, part headers without control characters, and the closing boundary at its end. Send the archive as a form upload, e.g. curl -F file=@repo.zip.',
          { cause: error },
        ),
      );
    });
  };
}

/**
 * The upload's name as the scan reports it (`repo_name` when the archive has no single top-level
 * folder, and the download's file name): the client chose it, so it loses any folder part and
 * every control, line-separator and bidirectional-override character (a terminal or a log would
 * obey them). Each run of them becomes one `_`.
 */
function cleanUploadName(original: string): string {
  const base = original.slice(Math.max(original.lastIndexOf('/'), original.lastIndexOf('\\')) + 1);
  const clean = base.replace(/[\p{Cc}\p{Zl}\p{Zp}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]+/gu, '_').trim();
  return clean === '.' || clean === '..' ? '' : clean;
}
