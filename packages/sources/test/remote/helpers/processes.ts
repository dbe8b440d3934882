import { readdirSync, readFileSync } from 'node:fs';

/** Command lines of live processes that mention `text` (Linux /proc), e.g. a test's unique URL. */
export function processesMentioning(text: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
    } catch {
      continue; // exited while we looked
    }
    if (cmdline.includes(text)) found.push(`${pid}: ${cmdline}`);
  }
  return found;
}
