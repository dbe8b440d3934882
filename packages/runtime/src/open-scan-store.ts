import { ScanRequestRecord } from '@reposcan/contracts';
import type { QueueTransport } from '@reposcan/queue';
import { ScanStore } from '@reposcan/storage';
import type { Logger } from './create-logger.js';

/**
 * The volume's store, with every state write announced on the transport's state signals (a
 * request waiting on a scan reads it at once, not at its next poll), and the completion webhook
 * of a scan that asked for one queued by whichever process ends the scan. A volume that cannot
 * be opened closes the transport, so no Redis connection outlives the failed start.
 */
export async function openScanStore(dataDir: string, transport: QueueTransport, log?: Logger): Promise<ScanStore> {
  const store: ScanStore = new ScanStore({
    dataDir,
    onStateChanged: (id) => transport.stateSignals.announce(id),
    onTerminal: (id) => void queueWebhook(store, transport, id, log),
  });
  await store.init().catch(async (error: unknown) => {
    await transport.close();
    throw error;
  });
  return store;
}

async function queueWebhook(store: ScanStore, transport: QueueTransport, id: string, log?: Logger): Promise<void> {
  try {
    const request = ScanRequestRecord.safeParse(await store.readRequest(id));
    if (!request.success || request.data.callback_url === undefined) return;
    await transport.deliveries.enqueue(id);
  } catch (error) {
    // The scan's outcome is recorded; only its webhook is lost (its status keeps saying pending).
    log?.warn({ err: error, scanId: id }, 'could not queue the completion webhook');
  }
}
