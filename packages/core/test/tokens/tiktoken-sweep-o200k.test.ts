// Every code point against tiktoken in o200k_base (code-point-sweep.ts says how).
import { sweepEveryCodePoint } from './code-point-sweep.js';

sweepEveryCodePoint('o200k_base');
