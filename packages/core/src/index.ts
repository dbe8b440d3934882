// Public surface of the engine. Everything here is usable without HTTP, Redis or a queue.
export * from './types.js';
export { compareNames } from './path-order.js';
export { walkTree, WalkTimeoutError, DEFAULT_EXCLUDED_DIRS } from './walk/index.js';
export type { GitWorkTree, WalkInput } from './walk/index.js';
export { classifyByName, classifyContent, isDocsPath } from './classify/index.js';
export {
  createTokenCounter,
  createTokenPool,
  estimateTokens,
  estimateTokensFromBytes,
  LONGEST_TOKEN_BYTES,
  TOKEN_KEY_BYTES,
  tokenCacheKey,
  TokenTable,
  withTokenCache,
} from './tokens/index.js';
export { writeTableSnapshots } from './tokens/bpe-table-snapshot.js';
export type { CountTokens, TokenCache, TokenCacheStats, TokenCounter, TokenPool } from './tokens/index.js';
export { formatSize, formatTokens } from './render/human-format.js';
export { buildFileUrl } from './render/file-url.js';
export { renderTree } from './render/render-tree.js';
export { displayPath } from './render/display-path.js';
export { txtRenderer } from './render/render-txt.js';
export { markdownRenderer } from './render/render-markdown.js';
export { jsonRenderer } from './render/render-json.js';
export { escapeJsonInto, MAX_ESCAPED_BYTES } from './render/json-string.js';
export type { FormatRenderer, RenderContext, RepositoryBlock, TextFormat } from './render/render-context.js';
export { ARTIFACT_FILE_NAMES } from './artifacts/artifact-names.js';
export { openOutput, spliceFileName } from './artifacts/spliced-artifact.js';
export type { OutputSource } from './artifacts/spliced-artifact.js';
export type { ArtifactFormat, WrittenArtifact } from './artifacts/artifact-names.js';
export { SECRETS_MAX_BYTES, redactionMark } from './secrets/secret-scan.js';
export type { SecretFinding, SecretScan, SecretsSummary } from './secrets/secret-scan.js';
export { partFileName } from './artifacts/write-parts.js';
export type { PartedOutput, WrittenPart } from './artifacts/write-parts.js';
export { runScan } from './scan/run-scan.js';
export type { RunScanDeps, ScanInput, ScanReport, ScanTimings } from './scan/run-scan.js';
export type { ChangeDigestReport } from './scan/change-digest.js';
export { CarryRefusedError, mayCarry } from './scan/carry-forward.js';
export type { CarriedScan, EarlierScan } from './scan/carry-forward.js';
export type { OutputLayout } from './artifacts/write-text-artifacts.js';
export type { FileReuse, FoundText, FreshText, StoredText } from './scan/file-reuse.js';
export type { AbsentFileReader } from './scan/absent-file-reader.js';
export type { FileCompression, FileSecrets } from './scan/process-files.js';
export { IGNORE_FILE_NAMES } from './walk/ignore-file-names.js';
export { inspectTree, toInspectResult } from './scan/inspect-tree.js';
export { lowerProcessPriority, lowerThreadPriority } from './io/background-priority.js';
export { writeAll } from './io/write-all.js';
export { forEachLine } from './text/byte-lines.js';
export { createEngine } from './engine/engine.js';
export type { Engine, EngineOptions } from './engine/engine.js';
export type { InspectInput, InspectReport } from './scan/inspect-tree.js';
export type { WireScanOptions } from '@reposcan/contracts/vocabulary';
export { threadEntry, WorkerThread } from './threads/worker-thread.js';
export type { RequestOptions, WorkerThreadOptions } from './threads/worker-thread.js';
export { serveThread, threadData } from './threads/serve-thread.js';
export type { RequestContext } from './threads/serve-thread.js';
