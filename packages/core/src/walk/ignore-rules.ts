// Lines of a `.gitignore` and what they match, as git reads them: per byte of the UTF-8 path,
// case-sensitive, the last matching line deciding. A line without a slash (a trailing one aside)
// matches an entry's name at any depth; a line with one matches the path below the ignore
// file's folder, with `*`, `?` and `[...]` stopping at `/`.
import { hasRawBytes, pathBytesOf } from '../path-bytes.js';
import { compileGlob, globMatches, type Glob } from './wildmatch.js';

const SLASH = 0x2f;
const BACKSLASH = 0x5c;

const K_NAME = 0; // a literal name
const K_SUFFIX = 1; // `*` then a literal: the name ends with it
const K_NAME_GLOB = 2; // a glob over the name
const K_PATH = 3; // a pattern holding a slash: a literal lead, then a glob over the rest of the path

export interface IgnoreRule {
  /** `!pattern`: the path is re-included. */
  readonly negative: boolean;
  /** `pattern/`: folders only. */
  readonly folderOnly: boolean;
  readonly kind: number;
  /** K_NAME: the name; K_SUFFIX: the ending. */
  readonly text: string;
  /** K_PATH: the literal bytes the path below the rules' folder starts with. */
  readonly lead: Uint8Array;
  /** K_NAME_GLOB, and K_PATH when something follows the lead. */
  readonly glob: Glob | null;
}

export interface IgnoreRules {
  readonly rules: readonly IgnoreRule[];
  /** K_NAME rules by name: their indexes, last first. */
  readonly byName: ReadonlyMap<string, readonly number[]>;
  /** K_SUFFIX rules whose ending is one extension (`*.log`), by it: their indexes, last first. */
  readonly byExtension: ReadonlyMap<string, readonly number[]>;
  /** K_PATH rules that are a literal path, by its bytes as a latin1 string: their indexes, last first. */
  readonly byPath: ReadonlyMap<string, readonly number[]>;
  /** Other K_PATH rules whose literal lead holds a whole first folder name, by it (latin1): indexes, last first. */
  readonly byFirstFolder: ReadonlyMap<string, readonly number[]>;
  /** Indexes of all the other rules, in order. */
  readonly others: readonly number[];
  /** Some rule looks at the path's bytes, not just at the name as a string. */
  readonly needsBytes: boolean;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function asString(bytes: Uint8Array): string | null {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return null;
  }
}

function isGlobSpecial(c: number): boolean {
  return c === 0x2a || c === 0x3f || c === 0x5b || c === BACKSLASH;
}

function literalLength(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length && !isGlobSpecial(bytes[i] as number)) i += 1;
  return i;
}

/** Git drops trailing spaces unless the last one is escaped with a backslash. */
function trimTrailingSpaces(line: Uint8Array): Uint8Array {
  let lastSpace = -1;
  for (let i = 0; i < line.length; i += 1) {
    const c = line[i];
    if (c === 0x20) {
      if (lastSpace < 0) lastSpace = i;
    } else if (c === BACKSLASH) {
      i += 1;
      if (i >= line.length) return line;
      lastSpace = -1;
    } else {
      lastSpace = -1;
    }
  }
  return lastSpace < 0 ? line : line.subarray(0, lastSpace);
}

/**
 * One line as a pattern: null for a blank line or a `#` comment. A NUL ends the line, as it ends
 * git's string.
 */
function patternOfLine(line: Uint8Array): Uint8Array | null {
  const nul = line.indexOf(0);
  const text = nul < 0 ? line : line.subarray(0, nul);
  if (line.length === 0 || text[0] === 0x23) return null;
  return trimTrailingSpaces(text);
}

function compileRule(pattern: Uint8Array): IgnoreRule | null {
  let body = pattern;
  const negative = body[0] === 0x21;
  if (negative) body = body.subarray(1);
  const folderOnly = body.length > 0 && body[body.length - 1] === SLASH;
  if (folderOnly) body = body.subarray(0, -1);
  // An empty pattern (``, `!`, `/`, a line of spaces) matches nothing.
  if (body.length === 0) return null;
  // One object shape for every rule: the matcher's loop then reads them at full speed.
  const rule = (kind: number, text: string, lead: Uint8Array, glob: Glob | null): IgnoreRule => ({
    negative,
    folderOnly,
    kind,
    text,
    lead,
    glob,
  });
  const none = new Uint8Array(0);
  if (!body.includes(SLASH)) {
    const lead = literalLength(body);
    const literal = lead === body.length ? asString(body) : null;
    if (literal !== null) return rule(K_NAME, literal, none, null);
    const ending =
      body[0] === 0x2a && literalLength(body.subarray(1)) === body.length - 1 ? asString(body.subarray(1)) : null;
    if (ending !== null) return rule(K_SUFFIX, ending, none, null);
    return rule(K_NAME_GLOB, '', none, compileGlob(body, false));
  }
  // Anchored to the rules' folder; one leading slash only says so. Git matches the literal lead
  // first and hands the glob only what follows it, so a `**` right after the lead counts as
  // standing at the start (`a**/b` matches `a/b` and `ax/y/b`).
  if (body[0] === SLASH) body = body.subarray(1);
  const lead = literalLength(body);
  return rule(K_PATH, '', body.slice(0, lead), lead === body.length ? null : compileGlob(body.subarray(lead), true));
}

/** One line of an ignore file, or one include/exclude pattern: null when it matches nothing. */
export function ruleOfLine(line: Uint8Array): IgnoreRule | null {
  const pattern = patternOfLine(line);
  return pattern === null ? null : compileRule(pattern);
}

/** The rules of an ignore file: lines split at LF (a CR before it dropped), a BOM skipped. */
export function rulesOfFile(bytes: Uint8Array): IgnoreRule[] {
  let from = bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  const rules: IgnoreRule[] = [];
  while (from < bytes.length) {
    let to = bytes.indexOf(0x0a, from);
    if (to < 0) to = bytes.length;
    // The CR of a CRLF line end goes (a line of just CR is blank).
    const line = bytes.subarray(from, to > from && bytes[to - 1] === 0x0d ? to - 1 : to);
    const rule = ruleOfLine(line);
    if (rule !== null) rules.push(rule);
    from = to + 1;
  }
  return rules;
}

function addTo(map: Map<string, number[]>, key: string, index: number): void {
  const indexes = map.get(key);
  if (indexes === undefined) map.set(key, [index]);
  else indexes.push(index);
}

/** Bytes as a string of one char per byte, so any bytes make a Map key. */
function latin1(bytes: Uint8Array, from: number, to: number): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset + from, to - from).toString('latin1');
}

/**
 * Indexes rules given in order: a later one wins over an earlier one. Names, extensions and
 * literal paths (most lines of a huge generated ignore file) are looked up, not tried one by one.
 */
export function indexIgnoreRules(rules: readonly IgnoreRule[]): IgnoreRules {
  const byName = new Map<string, number[]>();
  const byExtension = new Map<string, number[]>();
  const byPath = new Map<string, number[]>();
  const byFirstFolder = new Map<string, number[]>();
  const others: number[] = [];
  rules.forEach((rule, index) => {
    if (rule.kind === K_NAME) addTo(byName, rule.text, index);
    else if (rule.kind === K_SUFFIX && rule.text.lastIndexOf('.') === 0) addTo(byExtension, rule.text, index);
    else if (rule.kind === K_PATH && rule.glob === null) addTo(byPath, latin1(rule.lead, 0, rule.lead.length), index);
    else if (rule.kind === K_PATH && rule.lead.indexOf(SLASH) > 0)
      addTo(byFirstFolder, latin1(rule.lead, 0, rule.lead.indexOf(SLASH)), index);
    else others.push(index);
  });
  for (const map of [byName, byExtension, byPath, byFirstFolder]) for (const indexes of map.values()) indexes.reverse();
  const needsBytes = rules.some((rule) => rule.kind === K_NAME_GLOB || rule.kind === K_PATH);
  return { rules, byName, byExtension, byPath, byFirstFolder, others, needsBytes };
}

function ruleMatches(
  rule: IgnoreRule,
  name: string,
  path: Uint8Array,
  base: number,
  nameStart: number,
  end: number,
): boolean {
  switch (rule.kind) {
    case K_SUFFIX:
      return name.endsWith(rule.text);
    case K_NAME_GLOB:
      return globMatches(rule.glob as Glob, path, nameStart, end);
    default: {
      const { lead, glob } = rule;
      const from = base + lead.length;
      if (from > end) return false;
      for (let i = 0; i < lead.length; i += 1) if (path[base + i] !== lead[i]) return false;
      return glob === null ? from === end : globMatches(glob, path, from, end);
    }
  }
}

/** The later of `best` and the last of `indexes` (last first) that applies to the entry. */
function lastApplicable(
  rules: readonly IgnoreRule[],
  indexes: readonly number[] | undefined,
  isFolder: boolean,
  best: number,
): number {
  if (indexes === undefined) return best;
  for (const index of indexes) {
    if (index <= best) return best;
    if (isFolder || !(rules[index] as IgnoreRule).folderOnly) return index;
  }
  return best;
}

/**
 * The last rule matching an entry, or null. `path` holds the entry's path as UTF-8 (needed only
 * when `needsBytes`): `base` is where the path below the rules' folder starts, `nameStart` where
 * the entry's name starts, `end` where it ends.
 */
export function lastMatchingRule(
  set: IgnoreRules,
  name: string,
  isFolder: boolean,
  path: Uint8Array,
  base: number,
  nameStart: number,
  end: number,
): IgnoreRule | null {
  const { rules, others } = set;
  let best = -1;
  if (set.byName.size > 0) best = lastApplicable(rules, set.byName.get(name), isFolder, best);
  if (set.byExtension.size > 0) {
    const dot = name.lastIndexOf('.');
    if (dot >= 0) best = lastApplicable(rules, set.byExtension.get(name.slice(dot)), isFolder, best);
  }
  if (set.byPath.size > 0 && end > base)
    best = lastApplicable(rules, set.byPath.get(latin1(path, base, end)), isFolder, best);
  if (set.byFirstFolder.size > 0) {
    const slash = path.subarray(base, end).indexOf(SLASH);
    const candidates = slash > 0 ? set.byFirstFolder.get(latin1(path, base, base + slash)) : undefined;
    if (candidates !== undefined) {
      for (const index of candidates) {
        if (index <= best) break;
        const rule = rules[index] as IgnoreRule;
        if (rule.folderOnly && !isFolder) continue;
        if (ruleMatches(rule, name, path, base, nameStart, end)) {
          best = index;
          break;
        }
      }
    }
  }
  for (let j = others.length - 1; j >= 0; j -= 1) {
    const index = others[j] as number;
    if (index < best) break;
    const rule = rules[index] as IgnoreRule;
    if (rule.folderOnly && !isFolder) continue;
    if (ruleMatches(rule, name, path, base, nameStart, end)) return rule;
  }
  return best < 0 ? null : (rules[best] as IgnoreRule);
}

const encoder = new TextEncoder();

/**
 * Writes the bytes of `text` (a name or path as path-bytes.ts carries it: UTF-8, or the raw bytes
 * of a name that is not) into `buffer` at `offset` (which must have room for 3 bytes per code
 * unit); returns the end. ASCII, the common case, skips the encoder.
 */
export function writeUtf8(buffer: Uint8Array, offset: number, text: string): number {
  let p = offset;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (c >= 0x80) {
      const rest = text.slice(i);
      if (!hasRawBytes(rest)) return p + encoder.encodeInto(rest, buffer.subarray(p)).written;
      const bytes = pathBytesOf(rest);
      buffer.set(bytes, p);
      return p + bytes.length;
    }
    buffer[p] = c;
    p += 1;
  }
  return p;
}
