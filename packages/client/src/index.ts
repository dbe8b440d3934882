// Public surface of the typed client. Types come from openapi.yaml (generated/openapi.ts,
// `npm run client:generate`); nothing here imports the server's packages.
export { ReposcanClient } from './client.js';
export type {
  Download,
  FollowOptions,
  RequestOptions,
  ReposcanClientOptions,
  ScanEvent,
  Submission,
  SubmitOptions,
} from './client.js';
export { ReposcanApiError, ReposcanConnectionError, ReposcanIntegrityError } from './errors.js';
export type { ClientErrorCode } from './errors.js';
export { parseEventStream } from './sse.js';
export type { RawSseEvent } from './sse.js';
export { TERMINAL_STATES, isTerminalState } from './api-types.js';
export type * from './api-types.js';
export type { components, operations, paths } from './generated/openapi.js';
