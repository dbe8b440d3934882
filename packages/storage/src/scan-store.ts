import { randomBytes } from 'node:crypto';
import type { Stats } from 'node:fs';
import { link, lstat, mkdir, readdir, realpath, rename, rm } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import {
  isScanError,
  isScanId,
  ScanError,
  ScanStateRecord,
  TERMINAL_STATES,
  KeptWebhook,
  TokenEncoding,
  WebhookDelivery,
} from '@reposcan/contracts';
import { fsyncDir, fsyncFiles, writeFileAtomic } from './atomic-write.js';
import { readDiskStatus } from './disk-status.js';
import type { DiskStatus } from './disk-status.js';
import { asStorageError, hasCode } from './fs-errors.js';
import { VolumeReserve } from './volume-reserve.js';
import { LockTimeoutError, withFileLock } from './file-lock.js';
import type { HeldLock } from './file-lock.js';
import { KeyedSerial } from './keyed-serial.js';
import { readIfExists } from './read-if-exists.js';
import { removeTree } from './remove-tree.js';
import {
  assertScanId,
  CANCEL_MARKER,
  isResultFileName,
  REQUEST_FILE,
  RESULT_DIR,
  SCANS_DIR,
  STAGING_NAME,
  STATE_FILE,
  STATE_LOCK,
  TOKEN_CACHE_DIR,
  FILE_CACHE_DIR,
  TRASH_DIR,
  INCOMING_DIR,
  RESERVE_FILE,
  UPLOAD_FILE,
  WEBHOOK_FILE,
  KEPT_WEBHOOKS_DIR,
} from './scan-paths.js';
import type { ResultFileName } from './scan-paths.js';

export interface ScanStoreOptions {
  /** The shared volume; created if missing, then resolved to its real absolute path by `init()`. */
  dataDir: string;
  /** Called after every write of a scan's state.json and after its removal (the queue's state signals). Must not throw. */
  onStateChanged?: (id: string) => void;
  /**
   * Called once when a write makes a scan completed, failed or cancelled (after the write, by the
   * process that made it): where completion webhooks are queued. Must not throw.
   */
  onTerminal?: (id: string, record: ScanStateRecord) => void;
}

export interface StagingDirs {
  /** `scans/<id>/work.<attempt>.<random>`: remove it with `removeStaging` when the attempt ends. */
  dir: string;
  /** Where the clone or the extracted upload goes. */
  srcDir: string;
  /** Where the artifacts are built; handed to `publish`. */
  outDir: string;
}

export interface StagingEntry {
  dir: string;
  attempt: number;
  mtime: Date;
}

export type PublishOutcome = 'published' | 'already-published';

/** A read-modify-write takes milliseconds; a lock this old was left by a process that died inside one. */
const STATE_LOCK_TIMING = { staleMs: 10_000, waitMs: 30_000 };

interface Roots {
  dataDir: string;
  scansRoot: string;
  trashRoot: string;
  incomingRoot: string;
  keptWebhooksRoot: string;
}

/**
 * The shared volume, keyed by scan_id. State on disk is the source of truth: `state.json` is
 * replaced atomically, artifacts appear by one rename, deletes are rename-then-remove. Every
 * method taking an id validates it before any path is built or the file system is touched.
 */
export class ScanStore {
  private roots: Roots | undefined;
  private reserve: VolumeReserve | undefined;
  private readonly serial = new KeyedSerial();

  constructor(private readonly options: ScanStoreOptions) {}

  async init(): Promise<void> {
    if (this.roots) return;
    await mkdir(this.options.dataDir, { recursive: true });
    const dataDir = await realpath(this.options.dataDir);
    const roots = {
      dataDir,
      scansRoot: join(dataDir, SCANS_DIR),
      trashRoot: join(dataDir, TRASH_DIR),
      incomingRoot: join(dataDir, INCOMING_DIR),
      keptWebhooksRoot: join(dataDir, KEPT_WEBHOOKS_DIR),
    };
    await mkdir(roots.scansRoot, { recursive: true });
    await mkdir(roots.trashRoot, { recursive: true });
    await mkdir(roots.incomingRoot, { recursive: true });
    this.roots = roots;
    this.reserve = new VolumeReserve(join(dataDir, RESERVE_FILE));
    await this.keepReserve().catch(() => false);
  }

  /** Makes the full-volume reserve again where it was used (or never made); true when it did. */
  keepReserve(): Promise<boolean> {
    return this.reserve ? this.reserve.replenish() : Promise.resolve(false);
  }

  /** Where uploads are received before their scan exists (files named by the receiver). */
  incomingDir(): string {
    return this.paths().incomingRoot;
  }

  /** `token-cache/v1/<encoding>`: the token counts of one encoding, shared by every worker (VolumeTokenCache). */
  tokenCacheDir(encoding: TokenEncoding): string {
    TokenEncoding.parse(encoding); // a fixed name: never a path from elsewhere
    return join(this.paths().dataDir, TOKEN_CACHE_DIR, encoding);
  }

  /** `file-cache/v1`: per-file outcomes of earlier scans, shared by every worker (FileStore). */
  fileCacheDir(): string {
    return join(this.paths().dataDir, FILE_CACHE_DIR);
  }

  /** The real absolute path of DATA_DIR. */
  get dataDir(): string {
    return this.paths().dataDir;
  }

  scanDir(id: string): string {
    assertScanId(id);
    const { scansRoot } = this.paths();
    const dir = join(scansRoot, id);
    // Defence in depth: with a valid id this cannot fail, whatever the platform's separators.
    if (dirname(dir) !== scansRoot)
      throw new ScanError('INVALID_SCAN_ID', 'A scan_id is the lowercase UUID returned when the scan was accepted.');
    return dir;
  }

  /** Writes the accepted request and its first state; fails if the scan folder already exists. */
  async create(id: string, request: unknown, state: ScanStateRecord): Promise<void> {
    const dir = this.scanDir(id);
    const record = validRecord(id, state);
    try {
      await mkdir(dir);
    } catch (error) {
      if (hasCode(error, 'EEXIST')) throw new ScanError('INTERNAL_ERROR', `Scan folder ${id} already exists.`);
      throw asStorageError(error);
    }
    try {
      await writeFileAtomic(join(dir, REQUEST_FILE), toJson(request));
      await writeFileAtomic(join(dir, STATE_FILE), toJson(record));
    } catch (error) {
      // Half-accepted scans must not linger: without state.json the folder is unknown anyway.
      await removeTree(dir).catch(() => undefined);
      throw asStorageError(error);
    }
    this.options.onStateChanged?.(id);
  }

  /** null for an unknown scan, including a folder that is a symlink or has no state.json yet. */
  async readState(id: string): Promise<ScanStateRecord | null> {
    const dir = await this.existingScanDir(id);
    if (dir === null) return null;
    const text = await readIfExists(join(dir, STATE_FILE));
    return text === null ? null : parseRecord(id, text);
  }

  /**
   * A token that changes whenever state.json is rewritten (every write renames a new file over
   * it: inode, size and times), or null when there is none. One stat, a seventh of a read and
   * parse: a watcher that only needs to know whether anything changed asks this first.
   */
  async stateStamp(id: string): Promise<string | null> {
    try {
      const s = await lstat(join(this.scanDir(id), STATE_FILE), { bigint: true });
      return `${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
    } catch (error) {
      if (hasCode(error, 'ENOENT') || hasCode(error, 'ENOTDIR')) return null;
      throw error;
    }
  }

  async readRequest(id: string): Promise<unknown> {
    const dir = await this.requireScanDir(id);
    const text = await readIfExists(join(dir, REQUEST_FILE));
    if (text === null) throw notFound(id);
    try {
      return JSON.parse(text) as unknown;
    } catch (error) {
      throw new ScanError('INTERNAL_ERROR', `${SCANS_DIR}/${id}/${REQUEST_FILE} is not valid JSON.`, { cause: error });
    }
  }

  /**
   * Read-modify-write of state.json, serialised per id within this process and, through a lock
   * file next to it, across every process on the volume: a stalled worker's late progress write
   * cannot land between another worker's read and write. `mutate` returns the next record, or
   * null for "no change". A terminal record (completed, failed, cancelled) is final: `mutate` is
   * not called and the record comes back unchanged, so a late duplicate attempt can never turn a
   * completed scan into a failed one.
   */
  async updateState(
    id: string,
    mutate: (current: ScanStateRecord) => ScanStateRecord | null,
  ): Promise<ScanStateRecord> {
    const dir = this.scanDir(id);
    return await this.serial.run(id, async () => {
      let reserveFreed = false;
      for (;;) {
        // A symlink in place of the folder must not get a lock file written through it.
        if ((await this.existingScanDir(id)) === null) throw notFound(id);
        const outcome = await lockState(dir, id, async (lock) => {
          const current = await this.readState(id);
          if (current === null) throw notFound(id);
          if (TERMINAL_STATES.includes(current.state)) return current;
          const proposed = mutate(structuredClone(current));
          if (proposed === null) return current;
          const next = validRecord(id, { ...proposed, updated_at: new Date().toISOString() });
          // Broken as stale while this process was frozen: `current` may be outdated, so read again.
          if (!(await lock.stillHeld())) return 'lock-lost';
          // A full volume surfaces as DISK_FULL through lockState.
          await writeFileAtomic(join(dir, STATE_FILE), toJson(next));
          this.options.onStateChanged?.(id);
          if (TERMINAL_STATES.includes(next.state)) this.options.onTerminal?.(id, next);
          return next;
        }).catch(async (error: unknown) => {
          // On a full volume the reserve is freed (by this process or another a moment ago) and
          // the write tried once more, so the outcome is recorded all the same.
          if (reserveFreed || !this.reserve || !(isScanError(error) && error.code === 'DISK_FULL')) throw error;
          reserveFreed = true;
          await this.reserve.release();
          return 'lock-lost' as const;
        });
        if (outcome !== 'lock-lost') return outcome;
      }
    });
  }

  /** The completion webhook's delivery record; null when there is none (no callback_url, or nothing recorded yet). */
  async readWebhook(id: string): Promise<WebhookDelivery | null> {
    const dir = await this.existingScanDir(id);
    if (dir === null) return null;
    const text = await readIfExists(join(dir, WEBHOOK_FILE));
    if (text === null) return null;
    try {
      const parsed = WebhookDelivery.safeParse(JSON.parse(text));
      return parsed.success ? parsed.data : null;
    } catch {
      return null;
    }
  }

  /** Replaces the delivery record; only the scan's one delivery job writes it, so no lock is needed. */
  async writeWebhook(id: string, record: WebhookDelivery): Promise<void> {
    const dir = await this.requireScanDir(id);
    try {
      await writeFileAtomic(join(dir, WEBHOOK_FILE), toJson(WebhookDelivery.parse(record)));
    } catch (error) {
      throw asStorageError(error);
    }
  }

  /**
   * Keeps a scan's completion webhook apart from its folder, which a DELETE is about to remove:
   * its delivery job reads this instead (keptWebhook) and the janitor drops it once done.
   */
  async keepWebhook(id: string, kept: KeptWebhook): Promise<void> {
    try {
      await mkdir(this.paths().keptWebhooksRoot, { recursive: true });
      await writeFileAtomic(this.keptWebhookPath(id), toJson(KeptWebhook.parse(kept)));
    } catch (error) {
      throw asStorageError(error);
    }
  }

  /** A deleted scan's kept webhook; null when there is none (or it cannot be read). */
  async keptWebhook(id: string): Promise<KeptWebhook | null> {
    const text = await readIfExists(this.keptWebhookPath(id));
    if (text === null) return null;
    try {
      const parsed = KeptWebhook.safeParse(JSON.parse(text));
      return parsed.success ? parsed.data : null;
    } catch {
      return null;
    }
  }

  /** The scans with a kept webhook, and when each was last written. */
  async listKeptWebhooks(): Promise<Array<{ id: string; mtime: Date }>> {
    const root = this.paths().keptWebhooksRoot;
    const kept: Array<{ id: string; mtime: Date }> = [];
    const names = await readdir(root).catch((error: unknown) => {
      if (hasCode(error, 'ENOENT')) return [];
      throw asStorageError(error);
    });
    for (const name of names) {
      const id = name.slice(0, -'.json'.length);
      if (name !== `${id}.json` || !isScanId(id)) continue;
      const stats = await lstat(join(root, name)).catch(() => null);
      if (stats?.isFile()) kept.push({ id, mtime: stats.mtime });
    }
    return kept;
  }

  async dropKeptWebhook(id: string): Promise<void> {
    await rm(this.keptWebhookPath(id), { force: true });
  }

  private keptWebhookPath(id: string): string {
    assertScanId(id);
    return join(this.paths().keptWebhooksRoot, `${id}.json`);
  }

  async createStaging(id: string, attempt: number): Promise<StagingDirs> {
    const scanDir = await this.requireScanDir(id);
    if (!Number.isSafeInteger(attempt) || attempt < 0)
      throw new ScanError('INTERNAL_ERROR', `Attempt must be a whole number ≥ 0, got ${attempt}.`);
    const dir = join(scanDir, `work.${attempt}.${randomBytes(8).toString('hex')}`);
    const dirs = { dir, srcDir: join(dir, 'src'), outDir: join(dir, 'out') };
    try {
      await mkdir(dir);
      await mkdir(dirs.srcDir);
      await mkdir(dirs.outDir);
    } catch (error) {
      await removeTree(dir).catch(() => undefined);
      throw asStorageError(error);
    }
    return dirs;
  }

  /**
   * Publishes a finished output folder as `scans/<id>/result` by one rename. First writer wins:
   * when another attempt published already, its result stays and this returns 'already-published'
   * (the caller discards its own staging). `outDir` must lie inside a staging folder of the same
   * scan, so the rename never crosses file systems, and must not be empty, because rename(2)
   * silently replaces an empty target folder.
   */
  async publish(id: string, outDir: string): Promise<PublishOutcome> {
    const scanDir = await this.requireScanDir(id);
    const source = resolve(outDir);
    const inside = relative(scanDir, source).split(sep);
    if (inside.length < 2 || !STAGING_NAME.test(inside[0] ?? '')) {
      throw new ScanError('INTERNAL_ERROR', 'publish() takes a folder inside a staging folder of the same scan.');
    }
    // A symlink would be renamed as the link itself, publishing whatever it points at.
    if (!(await lstat(source)).isDirectory())
      throw new ScanError('INTERNAL_ERROR', 'publish() takes a real folder, not a link.');
    const entries = await readdir(source, { withFileTypes: true });
    if (entries.length === 0)
      throw new ScanError('INTERNAL_ERROR', `Nothing to publish for scan ${id}: the output folder is empty.`);
    await fsyncFiles(
      source,
      entries.filter((e) => e.isFile()).map((e) => e.name),
    );
    try {
      await rename(source, join(scanDir, RESULT_DIR));
    } catch (error) {
      if (hasCode(error, 'EEXIST', 'ENOTEMPTY')) return 'already-published';
      throw asStorageError(error);
    }
    await fsyncDir(scanDir);
    return 'published';
  }

  /**
   * Hard-links every published artifact of scan `fromId` except its summary.json into `outDir`
   * (a staging output folder of another scan, on the same volume): the bytes are shared, and the
   * file system frees them only when no scan links them any more, so removing either scan never
   * breaks the other. Rejects (SCAN_NOT_FOUND) when the earlier result is gone or going.
   */
  async linkPublished(fromId: string, outDir: string): Promise<string[]> {
    const from = join(await this.requireScanDir(fromId), RESULT_DIR);
    const names = (await readdir(from).catch(() => [] as string[])).filter(
      (name) => isResultFileName(name) && name !== 'summary.json',
    );
    if (names.length === 0) throw notFound(fromId);
    try {
      for (const name of names) await link(join(from, name), join(outDir, name));
    } catch (error) {
      if (hasCode(error, 'ENOENT')) throw notFound(fromId);
      throw asStorageError(error);
    }
    return names;
  }

  /** Removes a staging folder made by `createStaging`; refuses any other path. */
  async removeStaging(dir: string): Promise<void> {
    const { scansRoot } = this.paths();
    const target = resolve(dir);
    const [id, name, ...rest] = relative(scansRoot, target).split(sep);
    if (!isScanId(id) || !STAGING_NAME.test(name ?? '') || rest.length > 0) {
      throw new ScanError('INTERNAL_ERROR', 'removeStaging() takes a folder made by createStaging().');
    }
    // Through a symlinked scan folder the path would lead elsewhere: leave it to remove().
    if ((await this.existingScanDir(id)) === null) return;
    await removeTree(target);
  }

  /**
   * The identity of a scan's folder (device and inode) while it exists as a real folder, else null.
   * Scan ids are never reused and a published result is never replaced, so while this stays the
   * same, so does everything the scan published.
   */
  async folderIdentity(id: string): Promise<string | null> {
    const stats = await this.scanDirStats(id);
    return stats && `${stats.dev}:${stats.ino}`;
  }

  /** Absolute path of a published artifact; only fixed names, so no user input reaches the path. */
  resultFile(id: string, name: ResultFileName): string {
    const dir = this.scanDir(id);
    if (!isResultFileName(name)) throw new ScanError('INTERNAL_ERROR', 'Unknown artifact file name.');
    return join(dir, RESULT_DIR, name);
  }

  uploadPath(id: string): string {
    return join(this.scanDir(id), UPLOAD_FILE);
  }

  async requestCancel(id: string): Promise<void> {
    const dir = await this.requireScanDir(id);
    try {
      await writeFileAtomic(join(dir, CANCEL_MARKER), `${new Date().toISOString()}\n`);
    } catch (error) {
      throw asStorageError(error);
    }
  }

  /** True once cancellation was requested, and also when the scan no longer exists: a deleted scan is cancelled too. */
  async isCancelRequested(id: string): Promise<boolean> {
    const dir = await this.existingScanDir(id);
    if (dir === null) return true;
    try {
      await lstat(join(dir, CANCEL_MARKER));
      return true;
    } catch (error) {
      if (hasCode(error, 'ENOENT')) return false;
      throw error;
    }
  }

  /**
   * Deletes a scan: one rename into trash/ (readers see the whole scan or none of it), then the
   * tree is removed. False when the scan did not exist (a symlinked folder counts as absent).
   */
  async remove(id: string): Promise<boolean> {
    const dir = this.scanDir(id);
    const { trashRoot } = this.paths();
    return await this.serial.run(id, async () => {
      if ((await this.existingScanDir(id)) === null) return false;
      const trashed = join(trashRoot, `${id}.${randomBytes(6).toString('hex')}`);
      try {
        await rename(dir, trashed);
      } catch (error) {
        if (hasCode(error, 'ENOENT')) return false;
        throw asStorageError(error);
      }
      // Gone from view with the rename: watchers may say so before the tree is removed.
      this.options.onStateChanged?.(id);
      await removeTree(trashed);
      return true;
    });
  }

  /** Finishes deletes a crash interrupted; returns how many trash entries were removed. */
  async emptyTrash(): Promise<number> {
    const { trashRoot } = this.paths();
    const names = await readdir(trashRoot);
    for (const name of names) await removeTree(join(trashRoot, name));
    return names.length;
  }

  /**
   * Removes upload parts in incoming/ not written to for `olderThanMs` (an API that died
   * mid-upload leaves them; a finished upload is moved into its scan folder). Returns how many.
   */
  async removeStaleUploads(olderThanMs: number, now = Date.now()): Promise<number> {
    const { incomingRoot } = this.paths();
    let removed = 0;
    for (const entry of await readdir(incomingRoot, { withFileTypes: true })) {
      if (!entry.isFile()) continue;
      const file = join(incomingRoot, entry.name);
      const stats = await lstat(file).catch(() => null);
      if (stats === null || now - stats.mtimeMs <= olderThanMs) continue;
      await rm(file, { force: true });
      removed++;
    }
    return removed;
  }

  /** Ids of scan folders, sorted; anything else under scans/ (junk, symlinks, temp files) is ignored. */
  async listScanIds(): Promise<string[]> {
    const entries = await readdir(this.paths().scansRoot, { withFileTypes: true });
    return entries
      .filter((e) => e.isDirectory() && isScanId(e.name))
      .map((e) => e.name)
      .sort();
  }

  /** Staging folders of a scan with their mtime, for the janitor; [] for an unknown scan. */
  async listStaging(id: string): Promise<StagingEntry[]> {
    const scanDir = await this.existingScanDir(id);
    if (scanDir === null) return [];
    const found: StagingEntry[] = [];
    for (const entry of await readdir(scanDir, { withFileTypes: true })) {
      const match = entry.isDirectory() ? STAGING_NAME.exec(entry.name) : null;
      if (match === null) continue;
      const dir = join(scanDir, entry.name);
      try {
        found.push({ dir, attempt: Number(match[1]), mtime: (await lstat(dir)).mtime });
      } catch (error) {
        if (!hasCode(error, 'ENOENT')) throw error;
      }
    }
    return found.sort((a, b) => basename(a.dir).localeCompare(basename(b.dir)));
  }

  async diskStatus(): Promise<DiskStatus> {
    return await readDiskStatus(this.paths().dataDir);
  }

  private paths(): Roots {
    if (!this.roots) throw new Error('ScanStore.init() must be awaited before the store is used.');
    return this.roots;
  }

  /** The scan folder when it exists as a real folder; a symlink in its place counts as unknown (T9). */
  /** When the scan last changed (its state file, else its folder), whatever the state file holds; null for an unknown scan. */
  async lastChanged(id: string): Promise<Date | null> {
    const dir = await this.existingScanDir(id);
    if (dir === null) return null;
    const stats = (await lstat(join(dir, STATE_FILE)).catch(() => null)) ?? (await this.scanDirStats(id));
    return stats?.mtime ?? null;
  }

  private async existingScanDir(id: string): Promise<string | null> {
    return (await this.scanDirStats(id)) ? this.scanDir(id) : null;
  }

  /** lstat of the scan folder when it is a real folder, else null. */
  private async scanDirStats(id: string): Promise<Stats | null> {
    try {
      const stats = await lstat(this.scanDir(id));
      return stats.isDirectory() ? stats : null;
    } catch (error) {
      if (hasCode(error, 'ENOENT')) return null;
      throw error;
    }
  }

  private async requireScanDir(id: string): Promise<string> {
    const dir = await this.existingScanDir(id);
    if (dir === null) throw notFound(id);
    return dir;
  }
}

/** Holds `state.lock` in the scan folder while `task` runs; a folder deleted meanwhile reads as an unknown scan. */
async function lockState<T>(dir: string, id: string, task: (lock: HeldLock) => Promise<T>): Promise<T> {
  try {
    return await withFileLock(join(dir, STATE_LOCK), STATE_LOCK_TIMING, task);
  } catch (error) {
    if (hasCode(error, 'ENOENT')) throw notFound(id);
    if (error instanceof LockTimeoutError)
      throw new ScanError('INTERNAL_ERROR', `The state of scan ${id} stayed locked by another process; try again.`, {
        cause: error,
      });
    // A full volume, whether it refused the lock file or state.json: DISK_FULL.
    throw asStorageError(error);
  }
}

function notFound(id: string): ScanError {
  return new ScanError('SCAN_NOT_FOUND', `Scan ${id} does not exist; it may have expired or been deleted.`);
}

function toJson(value: unknown): string {
  const text = JSON.stringify(value, null, 2) as string | undefined;
  if (text === undefined) throw new ScanError('INTERNAL_ERROR', 'Value cannot be stored as JSON.');
  return `${text}\n`;
}

/** A state file that is not a state record (a torn write on a broken disk, a hand edit): the scan cannot be read, only removed. */
export class CorruptStateError extends ScanError {
  constructor(id: string, what: string, cause?: unknown) {
    super('INTERNAL_ERROR', `${SCANS_DIR}/${id}/${STATE_FILE} is corrupt: ${what}.`, { cause });
  }
}

function parseRecord(id: string, text: string): ScanStateRecord {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new CorruptStateError(id, 'not valid JSON', error);
  }
  const parsed = ScanStateRecord.safeParse(data);
  if (!parsed.success) throw new CorruptStateError(id, describeIssues(parsed.error.issues));
  return parsed.data;
}

/** Checks a record before it is written, so a bug cannot put an unreadable state.json on the volume. */
function validRecord(id: string, record: ScanStateRecord): ScanStateRecord {
  const parsed = ScanStateRecord.safeParse(record);
  if (!parsed.success)
    throw new ScanError(
      'INTERNAL_ERROR',
      `Refusing to write an invalid state for scan ${id}: ${describeIssues(parsed.error.issues)}.`,
    );
  if (parsed.data.scan_id !== id)
    throw new ScanError(
      'INTERNAL_ERROR',
      `State record of scan ${parsed.data.scan_id} cannot be written for scan ${id}.`,
    );
  return parsed.data;
}

function describeIssues(issues: readonly { path: PropertyKey[]; message: string }[]): string {
  return issues
    .slice(0, 3)
    .map((i) => `${i.path.map(String).join('.') || '(root)'}: ${i.message}`)
    .join('; ');
}
