import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import type { IServerAdapter } from '@bull-board/api/typings/app';
import type { RedisTarget } from '@reposcan/config';
import { Queue } from 'bullmq';
import { DELIVERY_QUEUE_NAME } from './delivery-queue.js';
import { SCAN_QUEUE_NAME } from './job-contract.js';
import { consoleLog, createErrorReporter } from './queue-log.js';
import type { QueueLog } from './queue-log.js';
import { closeConnection, createProducerConnection } from './redis-connections.js';

export interface QueueDashboard {
  close(): Promise<void>;
}

/**
 * bull-board over the scan and webhook delivery queues, drawn by whichever web framework owns `serverAdapter`.
 * Read-only: a scan's truth is its state.json on the volume, so retrying or removing a job
 * behind the API's back would desynchronise the two; DELETE /v1/cleanup/{id} is the way to
 * stop or remove a scan. Its own Redis connection, fail-fast like the API's.
 */
export function createQueueDashboard(o: {
  redis: RedisTarget;
  prefix: string;
  serverAdapter: IServerAdapter;
  log?: QueueLog;
}): QueueDashboard {
  const report = createErrorReporter(o.log ?? consoleLog);
  const connection = createProducerConnection(o.redis, report);
  // The scans, and the completion webhooks' deliveries (whose jobs hold a scan id, never a URL).
  const queues = [SCAN_QUEUE_NAME, DELIVERY_QUEUE_NAME].map((name) => {
    const queue = new Queue(name, { connection, prefix: o.prefix });
    queue.on('error', (error) => report('dashboard', error));
    return queue;
  });
  createBullBoard({
    queues: queues.map(
      (queue) => new BullMQAdapter(queue, { readOnlyMode: true, allowRetries: false, displayName: queue.name }),
    ),
    serverAdapter: o.serverAdapter,
    options: { uiConfig: { boardTitle: 'reposcan queue', hideDocsLink: true } },
  });
  return {
    async close() {
      await Promise.all(queues.map((queue) => queue.close().catch((error: unknown) => report('dashboard', error))));
      await closeConnection(connection);
    },
  };
}
