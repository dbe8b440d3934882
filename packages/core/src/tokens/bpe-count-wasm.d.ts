// Types for the generated bpe-count-wasm.js (`npm run wasm`).
/** The compiled packages/core/assembly/bpe-count.ts, base64. */
export const BPE_COUNT_WASM: string;
