import { Buffer } from 'node:buffer';
import { JSON_ESCAPE_WASM } from './json-escape-wasm.js';

/**
 * JSON string literals of UTF-8 content, written straight into an output buffer.
 *
 * JSON.stringify escapes only '"', '\\' and code units below 0x20 (and lone surrogates, which
 * valid UTF-8 never decodes to), all ASCII, so escaping the bytes one by one gives exactly the
 * UTF-8 of `JSON.stringify(decoded content)`, and every byte of a multi-byte character passes as
 * it is. The bytes go through a WebAssembly SIMD loop (json-escape.wat), 16 at a time between
 * escapes, in pieces of 64 kB copied in and out of its memory: 45–50 ms for the 70 MB of the
 * benchmark's corpus, copies included, where a JavaScript loop four bytes at a time took 110–165 ms
 * (decoding to latin1, JSON.stringify and encoding back took 0.36 s and made 70 MB of strings).
 * A Node without WebAssembly (`--jitless`) escapes with a plain byte loop instead.
 */

/** The longest escape, `\u00XX`. */
export const MAX_ESCAPED_BYTES = 6;

/** Where `escapeJsonInto` stopped: the next source byte and the next free output byte. */
export interface EscapeProgress {
  read: number;
  written: number;
}

/**
 * Escapes `source` from byte `from` into `target` from byte `at`, as far as `target` has room
 * for (a byte is only started with `MAX_ESCAPED_BYTES` free), without the surrounding quotes.
 * Returns where it stopped in both; call again with a fresh target until `read` is the length.
 */
export type JsonEscaper = (
  source: Uint8Array,
  from: number,
  target: Uint8Array,
  at: number,
  progress: EscapeProgress,
) => EscapeProgress;

/** The part of the WebAssembly API used here (the project's lib has no DOM types to name it). */
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { exports: object };
}

interface EscapeExports {
  memory: { buffer: ArrayBuffer };
  input: { value: number };
  input_bytes: { value: number };
  output: { value: number };
  escape(input: number, length: number, output: number): number;
}

/** The SIMD escaper, or null where this Node has no WebAssembly. */
export function wasmJsonEscaper(): JsonEscaper | null {
  const api = (globalThis as unknown as { WebAssembly?: WasmApi }).WebAssembly;
  if (api === undefined) return null;
  // A few hundred bytes, compiled once per thread that escapes; its memory never grows.
  const wasm = new api.Instance(new api.Module(Buffer.from(JSON_ESCAPE_WASM, 'base64'))).exports as EscapeExports;
  const memory = new Uint8Array(wasm.memory.buffer);
  const INPUT = wasm.input.value;
  const INPUT_BYTES = wasm.input_bytes.value;
  const OUTPUT = wasm.output.value;
  return (source, from, target, at, progress) => {
    let read = from;
    let written = at;
    for (;;) {
      // Within this many bytes, even all escapes fit.
      const take = Math.min(
        source.length - read,
        INPUT_BYTES,
        Math.floor((target.length - written) / MAX_ESCAPED_BYTES),
      );
      if (take <= 0) break;
      memory.set(source.subarray(read, read + take), INPUT);
      const end = wasm.escape(INPUT, take, OUTPUT);
      target.set(memory.subarray(OUTPUT, end), written);
      read += take;
      written += end - OUTPUT;
    }
    progress.read = read;
    progress.written = written;
    return progress;
  };
}

/** Each byte's escape letter (`\n` → 'n'), 0 when it takes `\u00XX`, or 0xff when it needs no escape. */
const ESCAPE = new Uint8Array(256).fill(0xff);
ESCAPE.fill(0, 0, 0x20);
for (const [byte, letter] of [
  [0x08, 'b'],
  [0x09, 't'],
  [0x0a, 'n'],
  [0x0c, 'f'],
  [0x0d, 'r'],
  [0x22, '"'],
  [0x5c, '\\'],
] as const)
  ESCAPE[byte] = letter.charCodeAt(0);
const HEX = Buffer.from('0123456789abcdef');

/** The same escape one byte at a time, for a Node without WebAssembly. */
export const bytewiseJsonEscaper: JsonEscaper = (source, from, target, at, progress) => {
  let read = from;
  let written = at;
  for (;;) {
    // Within `stop`, even all escapes fit.
    const stop = Math.min(source.length, read + Math.floor((target.length - written) / MAX_ESCAPED_BYTES));
    if (stop === read) break;
    while (read < stop) {
      const byte = source[read++] as number;
      const escape = ESCAPE[byte] as number;
      if (escape === 0xff) {
        target[written++] = byte;
      } else {
        target[written++] = 0x5c;
        if (escape !== 0) {
          target[written++] = escape;
        } else {
          target.set([0x75, 0x30, 0x30, HEX[byte >> 4] as number, HEX[byte & 15] as number], written);
          written += 5;
        }
      }
    }
  }
  progress.read = read;
  progress.written = written;
  return progress;
};

export const escapeJsonInto: JsonEscaper = wasmJsonEscaper() ?? bytewiseJsonEscaper;
