// File names are bytes; most are UTF-8 and are carried as the strings they decode to. A name that
// is not valid UTF-8 is carried as a string too, each byte that does not decode standing for
// itself as a lone surrogate U+DC80–U+DCFF (Python's "surrogateescape"): no valid UTF-8 decodes
// to a lone surrogate, so such a string never equals a real name, and it turns back into the very
// bytes for the file system (fsPath). Outputs never show it: shownPath writes it quoted.
import { isUtf8 } from 'node:buffer';

/** A lone low surrogate in U+DC80–U+DCFF: a byte that is not UTF-8. */
const RAW_BYTE = /(?<![\uD800-\uDBFF])[\uDC80-\uDCFF]/;

/** True when the path holds a byte that is not UTF-8. */
export function hasRawBytes(path: string): boolean {
  return RAW_BYTE.test(path);
}

/** Length of the well-formed UTF-8 sequence at `i` (RFC 3629: no overlongs, surrogates or > U+10FFFF), 0 if none. */
function sequenceAt(bytes: Uint8Array, i: number): number {
  const b0 = bytes[i] as number;
  if (b0 < 0x80) return 1;
  const cont = (k: number, lo = 0x80, hi = 0xbf): boolean => {
    const b = bytes[i + k];
    return b !== undefined && b >= lo && b <= hi;
  };
  if (b0 >= 0xc2 && b0 <= 0xdf) return cont(1) ? 2 : 0;
  if (b0 >= 0xe0 && b0 <= 0xef) {
    const lo = b0 === 0xe0 ? 0xa0 : 0x80;
    const hi = b0 === 0xed ? 0x9f : 0xbf;
    return cont(1, lo, hi) && cont(2) ? 3 : 0;
  }
  if (b0 >= 0xf0 && b0 <= 0xf4) {
    const lo = b0 === 0xf0 ? 0x90 : 0x80;
    const hi = b0 === 0xf4 ? 0x8f : 0xbf;
    return cont(1, lo, hi) && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

/** The string a name (or a path) is carried as. */
export function decodePathBytes(bytes: Uint8Array): string {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  if (isUtf8(buffer)) return buffer.toString('utf8');
  let text = '';
  for (let i = 0; i < buffer.length;) {
    const length = sequenceAt(buffer, i);
    if (length === 0) {
      text += String.fromCharCode(0xdc00 + (buffer[i] as number));
      i += 1;
    } else {
      text += buffer.toString('utf8', i, i + length);
      i += length;
    }
  }
  return text;
}

/** The bytes of a carried path. */
export function pathBytesOf(path: string): Buffer {
  if (!hasRawBytes(path)) return Buffer.from(path, 'utf8');
  const parts: Buffer[] = [];
  let from = 0;
  for (let i = 0; i < path.length; i += 1) {
    const c = path.charCodeAt(i);
    const paired = i > 0 && (path.charCodeAt(i - 1) & 0xfc00) === 0xd800;
    if (c >= 0xdc80 && c <= 0xdcff && !paired) {
      parts.push(Buffer.from(path.slice(from, i), 'utf8'), Buffer.of(c - 0xdc00));
      from = i + 1;
    }
  }
  parts.push(Buffer.from(path.slice(from), 'utf8'));
  return Buffer.concat(parts);
}

/** What to hand the file system for a carried path: the string itself unless it holds raw bytes. */
export function fsPath(path: string): string | Buffer {
  return hasRawBytes(path) ? pathBytesOf(path) : path;
}

function quoteName(name: string): string {
  let quoted = '"';
  for (let i = 0; i < name.length; i += 1) {
    const ch = name[i] as string;
    const c = name.charCodeAt(i);
    const paired = i > 0 && (name.charCodeAt(i - 1) & 0xfc00) === 0xd800;
    if (c >= 0xdc80 && c <= 0xdcff && !paired) quoted += `%${(c - 0xdc00).toString(16).toUpperCase()}`;
    else if (ch === '"') quoted += '%22';
    else if (ch === '%') quoted += '%25';
    else quoted += ch;
  }
  return `${quoted}"`;
}

/**
 * How a path is shown in every output: each name of it as it is, except a name that is not valid
 * UTF-8 or that starts with `"`, which is shown in double quotes, each byte that is not UTF-8 and
 * each `"` and `%` written as `%` and two hex digits (`caf\xe9.txt` → `"caf%E9.txt"`,
 * `d\xe9j\xe0/a.txt` → `"d%E9j%E0"/a.txt`). A shown name starts with `"` exactly when it is
 * quoted, so no quoted name is ever a real one, and every quoted name reads back to its bytes.
 * Percent, not git's backslash escapes: ZIP tools (archiver among them) read a backslash in an
 * entry name as a folder separator.
 */
export function shownPath(path: string): string {
  if (!path.includes('"') && !hasRawBytes(path)) return path;
  return path
    .split('/')
    .map((name) => (name.startsWith('"') || hasRawBytes(name) ? quoteName(name) : name))
    .join('/');
}

/** The bytes of one name as shownPath shows it: the way back from a quoted name. */
export function bytesOfShownName(name: string): Buffer {
  if (!name.startsWith('"')) return Buffer.from(name, 'utf8');
  const body = name.slice(1, -1);
  const parts: Buffer[] = [];
  let from = 0;
  for (let i = body.indexOf('%'); i >= 0; i = body.indexOf('%', from)) {
    parts.push(Buffer.from(body.slice(from, i), 'utf8'), Buffer.of(parseInt(body.slice(i + 1, i + 3), 16)));
    from = i + 3;
  }
  parts.push(Buffer.from(body.slice(from), 'utf8'));
  return Buffer.concat(parts);
}

/** The way back from shownPath: what classifying by name reads (a quoted `caf%E9.png"` has no `.png`). */
export function carriedPath(shown: string): string {
  if (!shown.includes('"')) return shown;
  return shown
    .split('/')
    .map((name) => (name.startsWith('"') ? decodePathBytes(bytesOfShownName(name)) : name))
    .join('/');
}
