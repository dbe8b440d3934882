import type { QueueTransport } from '@reposcan/queue';
import { ScanStore } from '@reposcan/storage';

/**
 * The volume's store, with every state write announced on the transport's state signals (a
 * request waiting on a scan reads it at once, not at its next poll). A volume that cannot be
 * opened closes the transport, so no Redis connection outlives the failed start.
 */
export async function openScanStore(dataDir: string, transport: QueueTransport): Promise<ScanStore> {
  const store = new ScanStore({ dataDir, onStateChanged: (id) => transport.stateSignals.announce(id) });
  await store.init().catch(async (error: unknown) => {
    await transport.close();
    throw error;
  });
  return store;
}
