// Remote git sources: parse what the user pasted, decide whether it may be fetched, pick the
// ref, clone it hardened, and describe it for the engine's file links.
export { parseRepoPath } from './parse-repo-path.js';
export type { ParsedRepoPath } from './parse-repo-path.js';
export type { HostFamily, RemoteSpec } from './remote-spec.js';
export { checkHostPolicy, checkRemotePolicy } from './remote-policy.js';
export type { HostPolicyWording, HostTarget, RemotePolicy, RemotePolicyDeps } from './remote-policy.js';
export { checkCallbackUrl } from './callback-url-policy.js';
export type { CheckedCallbackUrl } from './callback-url-policy.js';
export { createGitEnv } from './git-env.js';
export type { GitEnv, GitEnvOptions } from './git-env.js';
export { assertBranchName } from './ref-name.js';
export { baseCommitOf, resolveRef, resolveRefListing } from './resolve-ref.js';
export type { ResolvedRef, ResolveRefOptions } from './resolve-ref.js';
export { cloneRemote } from './clone-remote.js';
export type { CloneListing, ClonedRemote, CloneRemoteOptions } from './clone-remote.js';
export { CloneBlobs } from './clone-blobs.js';
export type { BlobReadOutcome, StoredBlob } from './clone-blobs.js';
export { buildWebSource } from './web-source.js';
export type { RemoteSourceInfo } from './web-source.js';
export {
  assertCredentialTransport,
  credentialForms,
  DEFAULT_GIT_USERNAMES,
  mayCarryCredential,
  parseGitCredential,
  scrubSecrets,
  withGitCredential,
} from './git-credential.js';
export type { GitCredential } from './git-credential.js';
export {
  checkGitCredentialsFile,
  credentialFor,
  GitCredentialsFileError,
  parseGitCredentials,
  readGitCredentials,
} from './git-credentials-file.js';
export type { GitCredentials } from './git-credentials-file.js';
