import { Buffer } from 'node:buffer';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  bytewiseJsonEscaper,
  escapeJsonInto,
  MAX_ESCAPED_BYTES,
  wasmJsonEscaper,
} from '../../src/render/json-string.js';
import type { JsonEscaper } from '../../src/render/json-string.js';

const wasm = wasmJsonEscaper();

it('escapes with WebAssembly where Node has it, with a byte loop where it has not (--jitless)', () => {
  expect(wasm).not.toBeNull();
  expect(escapeJsonInto).not.toBe(bytewiseJsonEscaper);
  const module = fileURLToPath(new URL('../../src/render/json-string.ts', import.meta.url));
  const script = `const m = await import(${JSON.stringify(module)}); const t = Buffer.alloc(64);
    const p = m.escapeJsonInto(Buffer.from('a"\\u00e9\\n\\u0001'), 0, t, 0, { read: 0, written: 0 });
    console.log(JSON.stringify([m.wasmJsonEscaper() === null, m.escapeJsonInto === m.bytewiseJsonEscaper, t.subarray(0, p.written).toString()]));`;
  const out = execFileSync(process.execPath, ['--jitless', '--import', 'tsx', '--input-type=module', '-e', script], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  expect(JSON.parse(out)).toEqual([true, true, JSON.stringify('a"é\n\u0001').slice(1, -1)]);
});

describe.each([
  ['WebAssembly SIMD', wasm as JsonEscaper],
  ['byte loop', bytewiseJsonEscaper],
])('escapeJsonInto (%s)', (_name, escapeJsonInto) => {
  /** The literal of `text` escaped into targets of `targetBytes` one after another, as the artifact writer does. */
  function literal(text: string, targetBytes = 1 << 16): { json: string; calls: number } {
    const source = Buffer.from(text, 'utf8');
    const pieces: Buffer[] = [];
    const progress = { read: 0, written: 0 };
    let calls = 0;
    do {
      const target = Buffer.alloc(targetBytes);
      escapeJsonInto(source, progress.read, target, 0, progress);
      calls++;
      expect(progress.written).toBeGreaterThan(0); // every call gets somewhere
      pieces.push(target.subarray(0, progress.written));
    } while (progress.read < source.length);
    return { json: `"${Buffer.concat(pieces).toString('utf8')}"`, calls };
  }

  const tricky =
    'quote " backslash \\ tab \t nul \u0000 bs \b ff \f esc \u001b del \u007f line\u2028sep é日😀\uFEFF\r\n' +
    '"\\'.repeat(20);

  it('writes the UTF-8 of JSON.stringify of the text, without the quotes', () => {
    expect(literal(tricky)).toEqual({ json: JSON.stringify(tricky), calls: 1 });
  });

  it('escapes every byte below 0x20 as JSON.stringify does', () => {
    const controls = Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).join('');
    expect(literal(controls).json).toBe(JSON.stringify(controls));
    expect(JSON.parse(literal(controls).json)).toBe(controls);
  });

  it.each([MAX_ESCAPED_BYTES, 7, 8, 13, 33, 100])(
    'resumes where it stopped, inside multi-byte characters too, with %i-byte targets',
    (size) => {
      for (let cut = 0; cut < 12; cut++) {
        const text = 'x'.repeat(cut) + tricky.repeat(3);
        expect(literal(text, size).json).toBe(JSON.stringify(text));
      }
    },
  );

  it('starts nothing it has no room to finish, and leaves bytes before `at` alone', () => {
    const target = Buffer.from('keep......');
    const progress = escapeJsonInto(Buffer.from('\u0001\u0002'), 0, target, 4, { read: 0, written: 0 });
    // Six free bytes: room for one \u0001, not for the second escape.
    expect(progress).toEqual({ read: 1, written: 10 });
    expect(target.toString('latin1')).toBe('keep\\u0001');
    expect(
      escapeJsonInto(Buffer.from('x'), 0, Buffer.alloc(MAX_ESCAPED_BYTES - 1), 0, { read: 0, written: 0 }),
    ).toEqual({ read: 0, written: 0 });
  });

  it('is exact on a large text of every kind of byte', () => {
    const text =
      Array.from({ length: 20_000 }, (_, i) => String.fromCodePoint((i * 7919) % 0x2fff)).join('') +
      '€"'.repeat(50_000);
    expect(JSON.parse(literal(text, 4096).json)).toBe(text);
    expect(literal(text, 4096).json).toBe(JSON.stringify(text));
  });

  it('finds escapes at any place within and across 16-byte blocks, for every byte value', () => {
    // The latin1 view through JSON.stringify escapes exactly the same bytes: the oracle here.
    const oracle = (bytes: Buffer): string =>
      Buffer.from(JSON.stringify(bytes.toString('latin1')), 'latin1').toString('latin1');
    const escapeAll = (bytes: Buffer): string => {
      const target = Buffer.alloc(bytes.length * MAX_ESCAPED_BYTES);
      const { read, written } = escapeJsonInto(bytes, 0, target, 0, { read: 0, written: 0 });
      expect(read).toBe(bytes.length);
      return `"${target.subarray(0, written).toString('latin1')}"`;
    };
    for (let byte = 0; byte < 256; byte++) {
      // 40 bytes: two whole blocks and a tail of 8 taken one byte at a time.
      for (let offset = 0; offset < 40; offset++) {
        const bytes = Buffer.alloc(40, 0x61);
        bytes[offset] = byte;
        bytes[(offset * 7 + 3) % 40] = 0x22; // a second escape, in the same block or another
        expect(escapeAll(bytes)).toBe(oracle(bytes));
      }
    }
    for (let length = 0; length < 40; length++) {
      const bytes = Buffer.alloc(length, 0x0a); // nothing but escapes, of every length
      expect(escapeAll(bytes)).toBe(oracle(bytes));
    }
  });

  it('is exact across the 64 kB pieces it escapes at a time, with room for all of it', () => {
    const text = `${'const a = "b\\c";\n\t'.repeat(20_000)}é日😀${'x'.repeat(70_000)}\u0001`;
    expect(literal(text, 1 << 20)).toEqual({ json: JSON.stringify(text), calls: 1 });
  });
});
