import { compareNames } from '../path-order.js';
import { displayPath } from './display-path.js';

interface Folder {
  folders: Map<string, Folder>;
  files: string[];
}

function newFolder(): Folder {
  return { folders: new Map(), files: [] };
}

function buildFolders(paths: Iterable<string>): Folder {
  const root = newFolder();
  for (const path of paths) {
    const parts = path.split('/');
    const name = parts.pop();
    if (name === undefined || name === '') continue;
    let folder = root;
    for (const part of parts) {
      let next = folder.folders.get(part);
      if (!next) {
        next = newFolder();
        folder.folders.set(part, next);
      }
      folder = next;
    }
    folder.files.push(name);
  }
  return root;
}

function drawFolder(folder: Folder, prefix: string, level: number, maxDepth: number | null, out: string[]): void {
  const folderNames = [...folder.folders.keys()].sort(compareNames);
  const fileNames = [...folder.files].sort(compareNames);
  const count = folderNames.length + fileNames.length;
  if (count === 0) return;
  if (maxDepth !== null && level > maxDepth) {
    out.push(`${prefix}└── ...`);
    return;
  }
  let index = 0;
  for (const name of folderNames) {
    const last = ++index === count;
    out.push(`${prefix}${last ? '└── ' : '├── '}${displayPath(name)}/`);
    drawFolder(folder.folders.get(name) ?? newFolder(), prefix + (last ? '    ' : '│   '), level + 1, maxDepth, out);
  }
  for (const name of fileNames) {
    const last = ++index === count;
    out.push(`${prefix}${last ? '└── ' : '├── '}${displayPath(name)}`);
  }
}

/**
 * Draw the directory tree of `paths` (POSIX, relative to the root) under `rootName/`:
 * folders first, then files, names sorted case-insensitively. With `maxDepth` N, N levels are
 * drawn and anything deeper collapses to `└── ...`.
 */
export function renderTree(rootName: string, paths: Iterable<string>, maxDepth: number | null = null): string {
  const out = [`${displayPath(rootName)}/`];
  drawFolder(buildFolders(paths), '', 1, maxDepth, out);
  return out.join('\n');
}
