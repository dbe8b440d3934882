import { ExpressAdapter } from '@bull-board/express';
import type { Router } from 'express';
import type { RedisTarget } from '@reposcan/config';
import { createQueueDashboard } from '@reposcan/queue';
import type { QueueLog } from '@reposcan/queue';

export const QUEUE_DASHBOARD_PATH = '/admin/queues';

export interface MountedQueueDashboard {
  router: Router;
  close(): Promise<void>;
}

/** ENABLE_QUEUE_DASHBOARD: bull-board's read-only view of the scan queue at /admin/queues. */
export function queueDashboard(o: { redis: RedisTarget; prefix: string; log: QueueLog }): MountedQueueDashboard {
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath(QUEUE_DASHBOARD_PATH);
  const dashboard = createQueueDashboard({ redis: o.redis, prefix: o.prefix, serverAdapter, log: o.log });
  return { router: serverAdapter.getRouter() as Router, close: () => dashboard.close() };
}
