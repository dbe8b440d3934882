// The generators' common end: write the generated file, or with --check (how `npm test` runs
// them) fail when the checked-in file is not what the generator makes now.
import { readFile, writeFile } from 'node:fs/promises';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

/** `source` names what the file is generated from; `command` regenerates it. */
export async function writeGenerated(target: string, text: string, source: string, command: string): Promise<void> {
  const name = relative(ROOT, target);
  if (process.argv.includes('--check')) {
    const current = await readFile(target, 'utf8').catch(() => '');
    if (current !== text) {
      console.error(`${name} is out of date with ${source}: run \`${command}\` and commit the result.`);
      process.exit(1);
    }
    console.log(`${name} is up to date with ${source}.`);
  } else {
    await writeFile(target, text);
    console.log(`wrote ${name}`);
  }
}
