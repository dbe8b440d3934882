// Builds legacy-encoded bytes for tests: no encoder for Shift_JIS, GBK, KOI8-R… ships with Node
// (TextEncoder is UTF-8 only) and iconv-lite is not installed, so invert TextDecoder over each
// encoding's code space. The tests pin a few known byte sequences to keep this helper honest.
// Not for windows-1252: Node's TextDecoder gets 0x80–0x9F wrong there (nodejs/node#60888).

const encoders = new Map<string, Map<string, number[]>>();

function buildTable(label: string): Map<string, number[]> {
  const decoder = new TextDecoder(label, { fatal: true });
  const table = new Map<string, number[]>();
  const add = (bytes: number[]): void => {
    let char: string;
    try {
      char = decoder.decode(Uint8Array.from(bytes));
    } catch {
      return;
    }
    if ([...char].length === 1 && !table.has(char)) table.set(char, bytes);
  };
  for (let lead = 0x80; lead <= 0xff; lead++) add([lead]);
  for (let lead = 0x81; lead <= 0xfe; lead++) for (let trail = 0x40; trail <= 0xfe; trail++) add([lead, trail]);
  return table;
}

export function encodeLegacy(text: string, label: string): Uint8Array {
  let table = encoders.get(label);
  if (!table) {
    table = buildTable(label);
    encoders.set(label, table);
  }
  const out: number[] = [];
  for (const char of text) {
    const code = char.codePointAt(0)!;
    if (code < 0x80) {
      out.push(code);
      continue;
    }
    const bytes = table.get(char);
    if (!bytes) throw new Error(`${char} cannot be encoded in ${label}`);
    out.push(...bytes);
  }
  return Uint8Array.from(out);
}
