export { toEngineOptions } from './to-engine-options.js';
export { createScanProcessor } from './scan-processor.js';
export { startScanWorker } from './start-scan-worker.js';
export type { RunningWorker } from './start-scan-worker.js';
export { runWorkerProcess } from './run-worker-process.js';
export { closeWithinGrace } from './close-within-grace.js';
