import { access as fileAccess, readFile } from 'node:fs/promises';
import { ScanError, SummaryRecord } from '@reposcan/contracts';
import type { ArtifactFormat, ScanStateRecord } from '@reposcan/contracts';
import { ARTIFACT_FILE_NAMES, partFileName, spliceFileName } from '@reposcan/core';
import type { ResultFileName, ScanStore } from '@reposcan/storage';
import { mayAccess, notFound } from './scan-service.js';
import type { ScanAccess, ScanService } from './scan-service.js';
import { SummaryCache } from './summary-cache.js';

export const CONTENT_TYPES: Record<ArtifactFormat, string> = {
  txt: 'text/plain; charset=utf-8',
  md: 'text/markdown; charset=utf-8',
  json: 'application/json',
  zip: 'application/zip',
};

export interface ArtifactFile {
  path: string;
  /** Stored spliced (core's spliced-artifact.ts: read with openOutput), not as the file at `path`. */
  spliced: boolean;
  contentType: string;
  fileName: string;
  sha256: string | null;
}

/** A completed scan, or the 409 that says why not yet (with Retry-After while it runs). */
export function assertCompleted(record: ScanStateRecord): void {
  if (record.state === 'completed') return;
  if (record.state === 'failed') {
    throw new ScanError(
      'SCAN_FAILED',
      `Scan ${record.scan_id} failed (${record.error?.code ?? 'unknown'}): ${record.error?.message ?? 'no detail'}`,
    );
  }
  if (record.state === 'cancelled')
    throw new ScanError('SCAN_CANCELLED', `Scan ${record.scan_id} was cancelled; run it again to get artifacts.`);
  throw new ScanError(
    'SCAN_NOT_READY',
    `Scan ${record.scan_id} is ${record.state} (phase ${record.progress.phase}). Retry shortly, or follow ${`/v1/scans/${record.scan_id}/events`}.`,
    {
      retryAfterSeconds: 2,
    },
  );
}

export class ArtifactService {
  constructor(
    private readonly store: ScanStore,
    private readonly scans: ScanService,
  ) {}

  /** The file of `format` (of its part `part`, for an output in parts); 404 when `access` may not see the scan. */
  async artifact(
    scanId: string,
    format: ArtifactFormat,
    access: ScanAccess = null,
    part?: number,
  ): Promise<ArtifactFile> {
    const record = await this.scans.get(scanId, access);
    assertCompleted(record);
    const info = record.result?.artifacts[format];
    const parts = info?.parts;
    const name = record.result?.repo_name || 'reposcan';
    if (parts !== undefined) {
      if (part === undefined)
        throw new ScanError(
          'PART_REQUIRED',
          `This scan's ${format} output is in ${parts.length} parts (max_tokens_per_part); ask for one with &part=N, N from 1 to ${parts.length}, or download the ZIP bundle, which holds them all.`,
        );
      const found = parts.find((p) => p.part === part);
      if (found === undefined)
        throw new ScanError(
          'PART_NOT_FOUND',
          `This scan's ${format} output has parts 1 to ${parts.length}; there is no part ${part}.`,
        );
      if (format === 'zip') throw new Error('The ZIP bundle is never in parts');
      const file = partFileName(format, part, parts.length);
      return {
        path: await this.partPath(scanId, file, partFileName(format, part, part)),
        spliced: false,
        contentType: CONTENT_TYPES[format],
        fileName: `${name}.${file.slice('output.'.length)}`,
        sha256: found.sha256,
      };
    }
    if (part !== undefined)
      throw new ScanError(
        'PART_NOT_FOUND',
        format === 'zip'
          ? 'The ZIP bundle is never in parts: it is one file that holds every part of every format. Ask for it without part.'
          : `This scan's ${format} output is not in parts (it was run without max_tokens_per_part); ask again without part.`,
      );
    const path = this.store.resultFile(scanId, ARTIFACT_FILE_NAMES[format]);
    const whole = await exists(path);
    const spliced =
      !whole &&
      format !== 'zip' &&
      (await exists(this.store.resultFile(scanId, spliceFileName(ARTIFACT_FILE_NAMES[format]))));
    if (!whole && !spliced) {
      throw new ScanError(
        'FORMAT_NOT_PRODUCED',
        format === 'zip'
          ? 'This scan was run without create_zip, so it has no ZIP bundle. Run the scan again with create_zip: true.'
          : `This scan has no ${format} output.`,
      );
    }
    return {
      path,
      spliced,
      contentType: CONTENT_TYPES[format],
      fileName: `${name}.${format}`,
      sha256: info?.sha256 ?? null,
    };
  }

  /**
   * Where a part is: `file`, or for a result written before part names were padded to the width
   * of their count (a scan kept by SCAN_TTL_HOURS, or reused from the commit cache), `legacy`,
   * the name it had then: two digits at least, its own width past 99.
   */
  private async partPath(scanId: string, file: ResultFileName, legacy: ResultFileName): Promise<string> {
    const path = this.store.resultFile(scanId, file);
    if (legacy === file) return path;
    const older = this.store.resultFile(scanId, legacy);
    return (await exists(path)) || !(await exists(older)) ? path : older;
  }

  /**
   * The summary of a completed scan as JSON text. A published summary never changes, so it is kept
   * (most recently used first) and served again after one lstat shows the scan's folder is still
   * the same folder: no state or summary read, no parse, no stringify on a repeat request.
   */
  async summaryJson(scanId: string, access: ScanAccess = null): Promise<string> {
    // Taken before anything is read: if the folder goes meanwhile, the next request sees a
    // different identity (or none) and reads again.
    const folder = await this.store.folderIdentity(scanId);
    const cached = this.summaries.get(scanId);
    if (cached !== undefined) {
      if (cached.folder === folder) {
        if (!mayAccess(cached, access)) throw notFound(scanId);
        return cached.json;
      }
      this.summaries.delete(scanId);
    }
    const record = await this.scans.get(scanId, access);
    assertCompleted(record);
    const json = JSON.stringify(
      SummaryRecord.parse(JSON.parse(await readFile(this.store.resultFile(scanId, 'summary.json'), 'utf8'))),
    );
    if (folder !== null)
      this.summaries.set(scanId, { folder, json, ...(record.owner === undefined ? {} : { owner: record.owner }) });
    return json;
  }

  /** With the scan's owner: a repeat request is checked against it without reading the state. */
  private readonly summaries = new SummaryCache();
}

const exists = (path: string): Promise<boolean> =>
  fileAccess(path).then(
    () => true,
    () => false,
  );
