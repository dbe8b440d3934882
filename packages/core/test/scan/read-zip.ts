import { buffer } from 'node:stream/consumers';
import { openPromise } from 'yauzl';

/** Every entry of a ZIP file, by name. Test helper for checking bundles. */
export async function readZip(path: string): Promise<Map<string, Buffer>> {
  const zip = await openPromise(path, { lazyEntries: true });
  const entries = new Map<string, Buffer>();
  try {
    for await (const entry of zip.eachEntry()) {
      entries.set(entry.fileName, await buffer(await zip.openReadStreamPromise(entry)));
    }
  } finally {
    zip.close();
  }
  return entries;
}
