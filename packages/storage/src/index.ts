// Public surface of the shared volume layout (DATA_DIR/scans/<scan_id>/…).
export { CorruptStateError, ScanStore } from './scan-store.js';
export type { PublishOutcome, ScanStoreOptions, StagingDirs, StagingEntry } from './scan-store.js';
export type { DiskStatus } from './disk-status.js';
export { volumeRefusal } from './disk-status.js';
export { artifactDirRelative, assertScanId, isResultFileName, RESULT_FILE_NAMES } from './scan-paths.js';
export type { ResultFileName } from './scan-paths.js';
// Also for files outside the volume that several processes read and rewrite (the API key file).
export { writeFileAtomic } from './atomic-write.js';
export { LockTimeoutError, withFileLock } from './file-lock.js';
export { compactTokenCache, VolumeTokenCache } from './volume-token-cache.js';
export type { CompactionReport, VolumeTokenCacheOptions } from './volume-token-cache.js';
export { CommitCache, commitCacheKey, repositoryKey } from './commit-cache.js';
export type { CommitCacheMaterial, CommitIdentity } from './commit-cache.js';
export { CarriedScans } from './carried-scans.js';
export { FileStore } from './file-store.js';
export type { RepositoryFiles, SegmentWriter, StoredEntry } from './file-store.js';
