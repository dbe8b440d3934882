// Git's precedence between nested ignore files. For a path, the deepest ignore file with a
// matching line decides, and within a file the last matching line wins; a folder that is
// ignored is never entered, so nothing below it can be re-included. Each path is matched on its
// own, as git does: rules that ignore a folder say nothing about the paths below it.
import { lastMatchingRule, writeUtf8, type IgnoreRules } from './ignore-rules.js';

interface IgnoreLayer {
  /** Length of the rules' own folder path (with its `/`) in the listed folder's path. */
  readonly base: number;
  readonly rules: IgnoreRules;
}

/** The ignore rules in force in one folder, deepest first. */
export interface IgnoreStack {
  /** The listed folder's root-relative path as UTF-8, with a trailing `/` (empty at the root). */
  readonly folder: Uint8Array;
  /** `.gitignore` and `.gittxtignore` rules together: what an untracked path is matched against. */
  readonly layers: readonly IgnoreLayer[];
  /** `.gittxtignore` rules alone: what a tracked path is matched against. */
  readonly ownLayers: readonly IgnoreLayer[];
  /** Some layer matches paths by their bytes. */
  readonly needsBytes: boolean;
}

export const EMPTY_IGNORE_STACK: IgnoreStack = {
  folder: new Uint8Array(0),
  layers: [],
  ownLayers: [],
  needsBytes: false,
};

/** Adds the listed folder's own rules as the deepest layer (null: it has none). */
export function withFolderRules(
  stack: IgnoreStack,
  rules: IgnoreRules | null,
  ownRules: IgnoreRules | null = null,
): IgnoreStack {
  if (rules === null) return stack;
  const base = stack.folder.length;
  return {
    folder: stack.folder,
    layers: [{ base, rules }, ...stack.layers],
    ownLayers: ownRules === null ? stack.ownLayers : [{ base, rules: ownRules }, ...stack.ownLayers],
    needsBytes: stack.needsBytes || rules.needsBytes,
  };
}

/** Adds rules for the whole tree below every other layer (`.git/info/exclude` at the root). */
export function withBottomRules(stack: IgnoreStack, rules: IgnoreRules): IgnoreStack {
  return { ...stack, layers: [...stack.layers, { base: 0, rules }], needsBytes: stack.needsBytes || rules.needsBytes };
}

/** Entry paths are written here: matching never yields, so one buffer serves every call. */
let pathBuffer: Uint8Array = new Uint8Array(4096);

function bufferFor(bytes: number): Uint8Array {
  if (pathBuffer.length < bytes) pathBuffer = new Uint8Array(Math.max(bytes, pathBuffer.length * 2));
  return pathBuffer;
}

/**
 * Whether an entry of the listed folder is ignored: by all the rules, or by `.gittxtignore`'s
 * alone (`ownOnly`). Symbolic links are not folders, as in git.
 */
export function isIgnored(stack: IgnoreStack, name: string, isFolder: boolean, ownOnly = false): boolean {
  const { folder } = stack;
  const layers = ownOnly ? stack.ownLayers : stack.layers;
  if (layers.length === 0) return false;
  let path = pathBuffer;
  let end = 0;
  if (stack.needsBytes) {
    path = bufferFor(folder.length + 3 * name.length);
    path.set(folder, 0);
    end = writeUtf8(path, folder.length, name);
  }
  for (const layer of layers) {
    const rule = lastMatchingRule(layer.rules, name, isFolder, path, layer.base, folder.length, end);
    if (rule !== null) return !rule.negative;
  }
  return false;
}

/** The stack as seen from the sub-folder `name` of the listed folder. */
export function enterFolder(stack: IgnoreStack, name: string): IgnoreStack {
  const buffer = bufferFor(stack.folder.length + 3 * name.length + 1);
  buffer.set(stack.folder, 0);
  const end = writeUtf8(buffer, stack.folder.length, name);
  buffer[end] = 0x2f;
  return { ...stack, folder: buffer.slice(0, end + 1) };
}
