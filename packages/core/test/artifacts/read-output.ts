import { Buffer } from 'node:buffer';
import { openOutput } from '../../src/artifacts/spliced-artifact.js';

/** Every byte of output `path` (`<folder>/output.<format>`), whether it is one file or spliced. */
export async function readOutput(path: string): Promise<Buffer> {
  const output = await openOutput(path);
  try {
    const bytes = Buffer.alloc(output.size);
    const read = await output.read(bytes, 0);
    if (read !== output.size) throw new Error(`${path} read ${read} of ${output.size} bytes`);
    return bytes;
  } finally {
    await output.close();
  }
}
