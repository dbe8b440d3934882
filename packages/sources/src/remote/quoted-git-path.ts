// git writes a path holding a byte outside printable ASCII, a `"` or a `\` in double quotes with C
// escapes (core.quotePath, on for every command run here). runGit gives git's output as UTF-8
// text, which would lose the bytes of a name that is not UTF-8; the quoted form keeps them.
import { decodePathBytes } from '@reposcan/core/path-bytes';

const SIMPLE_ESCAPES: Readonly<Record<string, number>> = {
  a: 0x07,
  b: 0x08,
  t: 0x09,
  n: 0x0a,
  v: 0x0b,
  f: 0x0c,
  r: 0x0d,
  '"': 0x22,
  '\\': 0x5c,
};

/** A path as git prints it, carried as @reposcan/core/path-bytes says. */
export function unquoteGitPath(text: string): string {
  if (!text.startsWith('"') || !text.endsWith('"') || text.length < 2) return text;
  const bytes: number[] = [];
  const body = Buffer.from(text.slice(1, -1), 'utf8');
  for (let i = 0; i < body.length; i += 1) {
    const b = body[i] as number;
    if (b !== 0x5c) {
      bytes.push(b);
      continue;
    }
    const next = String.fromCharCode(body[i + 1] ?? 0);
    if (next >= '0' && next <= '7') {
      bytes.push(parseInt(body.toString('latin1', i + 1, i + 4), 8));
      i += 3;
    } else {
      bytes.push(SIMPLE_ESCAPES[next] ?? (body[i + 1] as number));
      i += 1;
    }
  }
  return decodePathBytes(Uint8Array.from(bytes));
}
