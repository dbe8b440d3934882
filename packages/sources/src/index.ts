// Where a scan's files come from. Each source is its own folder: remote (hardened git),
// local (allowed roots), archive (safe ZIP extraction); prepareSource turns an accepted
// request into a tree on disk through whichever one it names.
export * from './remote/index.js';
export * from './local/index.js';
export * from './archive/index.js';
export { baseRefNotSupported, filesOffDisk, prepareSource, resolveRemoteCommit } from './prepare-source.js';
export { diffAgainstBase } from './remote/change-set.js';
export type { ChangeSet, FileChange } from './remote/change-set.js';
export type {
  PrepareContext,
  PreparedSource,
  PreparedSourceInfo,
  RemoteCommit,
  SourceSettings,
} from './prepare-source.js';
export { sourceSettingsFromConfig, webhookPolicyFromConfig } from './source-settings-from-config.js';
export { describeSourcePolicy } from './describe-source-policy.js';
export { checkSourcesAtStart } from './check-sources-at-start.js';
export { POLICY_VARIABLE, policyRefusal } from './policy-refusal.js';
export type { SourcePolicy } from './policy-refusal.js';
