export { SCAN_QUEUE_NAME, SCAN_JOB_NAME, ScanJobPayload } from './job-contract.js';
export { HandedBack, isTransientError } from './failure-policy.js';
export type { ScanJobContext, ScanProcessor } from './job-contract.js';
export type {
  FinalFailure,
  QueueTransport,
  ScanJobState,
  ScanQueue,
  ScanWorker,
  ScanWorkerOptions,
  TransportOptions,
} from './queue-transport.js';
export type { QueueLog } from './queue-log.js';
export { createBullMqTransport } from './bullmq-transport.js';
export type { BullMqTransportOptions } from './bullmq-transport.js';
export { createMemoryTransport } from './memory-transport.js';
export { purgeQueuePrefix } from './queue-purge.js';
export { createQueueDashboard } from './queue-dashboard.js';
export type { QueueDashboard } from './queue-dashboard.js';
export { createLocalStateSignals, createRedisStateSignals } from './state-signals.js';
export type { RedisStateSignalsOptions, StateSignals } from './state-signals.js';
export { createMemoryWorkerRegistry, createRedisWorkerRegistry, WORKER_ANNOUNCE_TTL_MS } from './worker-registry.js';
export type { WorkerAnnouncement, WorkerRegistry } from './worker-registry.js';
export { LocalWindowCounters } from './window-counters.js';
export type { WindowCount, WindowCounters } from './window-counters.js';
export { createMemoryCredentialVault, createRedisCredentialVault, openSealed, sealSecret } from './credential-vault.js';
export type { CredentialVault } from './credential-vault.js';
export { DELIVERY_JOB_NAME, DELIVERY_QUEUE_NAME, DeliveryJobPayload, deliveryRetryDelayMs } from './delivery-queue.js';
export type {
  DeliveryContext,
  DeliveryProcessor,
  DeliveryQueue,
  DeliveryWorker,
  DeliveryWorkerOptions,
} from './delivery-queue.js';
