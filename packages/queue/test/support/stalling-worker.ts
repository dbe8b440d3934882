// Runs in a child process: a BullMQ worker whose processor never returns, so a test can
// kill -9 the process mid-job the way an OOM kill or a hard redeploy would.
// Usage: node --conditions=source --import tsx stalling-worker.ts <redisUrl> <prefix>
import { createBullMqTransport } from '../../src/index.js';

const [redisUrl = '', prefix = ''] = process.argv.slice(2);
const transport = createBullMqTransport({
  redis: { kind: 'single', url: redisUrl },
  prefix,
  maxWaiting: 10,
  attempts: 3,
  log: () => {},
});
transport.startWorker({
  concurrency: 1,
  lockDurationMs: 1_000,
  stalledIntervalMs: 500,
  processor: async ({ scanId, attempt }) => {
    process.stdout.write(`${JSON.stringify({ active: scanId, attempt })}\n`);
    await new Promise<never>(() => {});
  },
});
