// The scan worker: takes scan jobs from a queue transport and runs each one (prepare the
// source, run the engine, publish, record the outcome). ROLE=worker runs it in a process of its
// own (runWorkerProcess); ROLE=all runs it inside the API process (startScanWorker).
export { createScanProcessor } from './scan-processor.js';
export { startScanWorker } from './start-scan-worker.js';
export type { RunningWorker } from './start-scan-worker.js';
export { runWorkerProcess } from './run-worker-process.js';
export { closeWithinGrace } from './close-within-grace.js';
export { completeFromEarlierScan } from './reuse-result.js';
