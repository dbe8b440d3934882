// README.md as the tests that run its examples read it: a section, and the fenced blocks in it.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

export function readReadme(): Promise<string> {
  return readFile(join(REPO_ROOT, 'README.md'), 'utf8');
}

/** The text under `## <title>`, up to the next heading of level 2 or deeper. */
export function readmeSection(readme: string, title: string): string {
  const start = readme.indexOf(`\n## ${title}\n`);
  if (start < 0) throw new Error(`README.md has no section "${title}"`);
  const end = readme.indexOf('\n##', start + 1);
  return readme.slice(start, end < 0 ? undefined : end);
}

/** The contents of the fenced blocks of `language` in `text`, in order. */
export function codeBlocks(text: string, language: string): string[] {
  return [...text.matchAll(new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``, 'g'))].map((m) => m[1] as string);
}
