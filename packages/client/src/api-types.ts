// Names for the shapes the client sends and receives, looked up through the generated
// operations (not restated): when openapi.yaml renames, drops or reshapes a response, these
// lookups stop compiling, and so does every caller that relied on the old shape.
import type { components, operations } from './generated/openapi.js';

type JsonOf<R> = R extends { content: { 'application/json': infer Body } } ? Body : never;
type DataOf<R> = JsonOf<R> extends { data: infer Data } ? Data : never;

export type ScanRequest = operations['createScan']['requestBody']['content']['application/json'];
export type InspectRequest = operations['inspect']['requestBody']['content']['application/json'];
/** Query parameters of POST /v1/upload as the wire carries them (strings). */
export type UploadQuery = NonNullable<operations['uploadScan']['parameters']['query']>;
/** The scan options an upload takes: every scan option except the repository, branch and commit cache (uploads are never cached). */
export type UploadOptions = Omit<ScanRequest, 'repo_path' | 'branch' | 'cache'>;

export type ScanResult = DataOf<operations['createScan']['responses'][201]>;
export type ScanAccepted = DataOf<operations['createScan']['responses'][202]>;
export type ScanStatus = DataOf<operations['getScan']['responses'][200]>;
export type InspectResult = DataOf<operations['inspect']['responses'][200]>;
export type SummaryRecord = DataOf<operations['getSummary']['responses'][200]>;
export type CleanupResult = DataOf<operations['cleanup']['responses'][200]>;
export type Health = JsonOf<operations['health']['responses'][200]>;
export type Ready = JsonOf<operations['ready']['responses'][200]>;

export type ErrorEnvelope = components['schemas']['ErrorEnvelope'];
export type SecretsReport = components['schemas']['SecretsReport'];
export type CompressionReport = components['schemas']['CompressionReport'];
export type ErrorCode = ErrorEnvelope['code'];
export type ScanState = ScanStatus['state'];
export type ScanProgress = ScanStatus['progress'];
export type ScanPhase = ScanProgress['phase'];
export type ScanFailure = NonNullable<ScanStatus['error']>;
export type ArtifactFormat = operations['download']['parameters']['query']['format'];
export type Artifact = ScanResult['artifacts'][string];

export const TERMINAL_STATES: readonly ScanState[] = ['completed', 'failed', 'cancelled'];

export function isTerminalState(state: ScanState): boolean {
  return TERMINAL_STATES.includes(state);
}
