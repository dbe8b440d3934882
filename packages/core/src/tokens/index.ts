export { LONGEST_TOKEN_BYTES } from './bpe-engine.js';
export { createTokenCounter } from './token-counter.js';
export type { TokenCounter } from './token-counter.js';
export { createTokenPool } from './token-pool.js';
export type { CountTokens, TokenPool, TokenPoolOptions } from './token-pool.js';
export { estimateTokens, estimateTokensFromBytes } from './estimate-tokens.js';
export { TOKEN_KEY_BYTES, TokenTable } from './token-table.js';
export { tokenCacheKey, withTokenCache } from './token-cache.js';
export type { TokenCache, TokenCacheStats } from './token-cache.js';
