import { createTokenPool } from '@reposcan/core';
import type { TokenEncodingName, TokenPool } from '@reposcan/core';

/**
 * One warm tokenizer pool per encoding for the whole worker process: BPE tables load once,
 * not once per job.
 */
export class TokenPools {
  private readonly pools = new Map<TokenEncodingName, TokenPool>();

  constructor(private readonly threads: number) {}

  get(encoding: TokenEncodingName): TokenPool {
    let pool = this.pools.get(encoding);
    if (!pool) {
      pool = createTokenPool({ encoding, threads: this.threads });
      this.pools.set(encoding, pool);
    }
    return pool;
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((p) => p.close()));
    this.pools.clear();
  }
}
