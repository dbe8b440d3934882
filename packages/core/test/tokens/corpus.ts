// A deterministic real-world corpus for the token tests: files of the installed node_modules (pinned by
// package-lock) and, when present, the Python standard library, chosen by sorted path with a fixed
// stride so that each group spreads over many packages.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const PYTHON_STDLIB = '/usr/lib/python3.11';

export interface CorpusFile {
  /** Repository-relative path (or absolute outside the repository). */
  path: string;
  text: string;
}

export interface CorpusGroup {
  name: string;
  /** Which paths belong to the group. */
  path: RegExp;
  /** Which contents belong to the group, when the path is not enough. */
  text?: (text: string, path: string) => boolean;
  root?: string;
}

const cache = new Map<string, string[]>();

function listFiles(root: string): string[] {
  let files = cache.get(root);
  if (files === undefined) {
    files = [];
    const walk = (dir: string): void => {
      let entries;
      try {
        entries = readdirSync(dir, { withFileTypes: true });
      } catch {
        return;
      }
      for (const entry of entries) {
        // Dot folders are caches that other tools rewrite (node_modules/.vite), not pinned content.
        if (entry.name.startsWith('.')) continue;
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (entry.isFile()) files?.push(path);
      }
    };
    walk(root);
    files.sort();
    cache.set(root, files);
  }
  return files;
}

function avgLineLength(text: string): number {
  let lines = 1;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) lines++;
  return text.length / lines;
}

/** Minified bundles and source maps: long lines of high-entropy text. */
export const isGenerated = (path: string, text: string): boolean =>
  path.endsWith('.map') || /\.min\.[cm]?js$/.test(path) || (/\.[cm]?js$/.test(path) && avgLineLength(text) > 300);

export const GROUPS = {
  ts: { name: 'ts', path: /(?<!\.d)\.[cm]?ts$/ },
  dts: { name: 'd.ts', path: /\.d\.[cm]?ts$/ },
  js: { name: 'js', path: /\.[cm]?js$/, text: (t, p) => !isGenerated(p, t) },
  md: { name: 'md', path: /\.md$/ },
  json: { name: 'json', path: /\.json$/ },
  map: { name: 'map', path: /\.map$/ },
  generated: { name: 'minified+map', path: /\.(?:[cm]?js|map)$/, text: (t, p) => isGenerated(p, t) },
  py: { name: 'py', path: /\.py$/, root: PYTHON_STDLIB },
} satisfies Record<string, CorpusGroup>;

export function hasPythonStdlib(): boolean {
  try {
    return statSync(PYTHON_STDLIB).isDirectory();
  } catch {
    return false;
  }
}

/**
 * About `budgetChars` of a group: every k-th file of the group (sorted paths), k chosen so that the
 * picks spread over the whole group. Files above `maxFileChars` and files `accept` rejects are skipped.
 */
export function sampleGroup(
  group: CorpusGroup,
  budgetChars: number,
  {
    maxFileChars = 256 * 1024,
    accept = () => true,
  }: { maxFileChars?: number; accept?: (text: string) => boolean } = {},
): CorpusFile[] {
  const root = group.root ?? join(REPO_ROOT, 'node_modules');
  const read = (path: string): string | undefined => {
    const size = statSync(path).size;
    if (size === 0 || size > maxFileChars * 3) return undefined;
    const text = readFileSync(path, 'utf8');
    if (text.length > maxFileChars || (group.text && !group.text(text, path)) || !accept(text)) return undefined;
    return text;
  };
  // A content filter needs every file read to know the group's size; a path filter needs only stat.
  const members = listFiles(root)
    .filter((path) => group.path.test(path))
    .map((path) => ({ path, size: group.text ? (read(path)?.length ?? 0) : statSync(path).size }))
    .filter((file) => file.size > 0 && file.size <= maxFileChars * 3);
  const total = members.reduce((sum, file) => sum + file.size, 0);
  const stride = Math.max(1, Math.floor(total / budgetChars));
  const picked: CorpusFile[] = [];
  let chars = 0;
  for (let i = 0; i < members.length && chars < budgetChars; i += stride) {
    const path = (members[i] as { path: string }).path;
    const text = read(path);
    if (text === undefined) continue;
    picked.push({ path: path.startsWith(REPO_ROOT) ? relative(REPO_ROOT, path) : path, text });
    chars += text.length;
  }
  return picked;
}
