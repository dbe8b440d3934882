// File names may carry newlines, escapes or bidi overrides (T8). Human formats show such
// characters as `\uXXXX` so a name can never forge a header line or reorder text, and a backslash
// as `\\`, so an escaped name never reads as another name (`a\u202eb` with a real U+202E, and
// with the six characters); JSON keeps the real string.
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\\\u0000-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

export function displayPath(path: string): string {
  return path.replace(UNSAFE, (ch) => (ch === '\\' ? '\\\\' : `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`));
}
