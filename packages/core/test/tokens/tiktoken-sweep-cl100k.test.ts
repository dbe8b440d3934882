// Every code point against tiktoken in cl100k_base (code-point-sweep.ts says how).
import { sweepEveryCodePoint } from './code-point-sweep.js';

sweepEveryCodePoint('cl100k_base');
