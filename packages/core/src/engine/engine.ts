// The engine of a long-lived process (a worker, the API's inspect thread, the CLI): it owns every
// thread a scan or a preview runs on (io-threads.ts: file and walk threads; token-pool.ts: one
// tokenizer pool per encoding), so nothing of it lives at module level and close() ends all of it.
import { availableParallelism } from 'node:os';
import { IoThreads } from '../io/io-threads.js';
import { previewTree } from '../scan/inspect-tree.js';
import type { InspectInput, InspectReport } from '../scan/inspect-tree.js';
import { scanTree } from '../scan/run-scan.js';
import type { RunScanDeps, ScanInput, ScanReport } from '../scan/run-scan.js';
import { threadScanDeps } from '../scan/scan-deps.js';
import type { ScanDeps } from '../scan/scan-deps.js';
import { createTokenPool } from '../tokens/token-pool.js';
import type { TokenPool } from '../tokens/token-pool.js';
import type { ProgressCallback, TokenEncodingName } from '../types.js';

export interface EngineOptions {
  /** Tokenizer threads of each encoding's pool; defaults to one per core. 0 counts on the calling thread. */
  tokenThreads?: number;
}

export interface Engine {
  /**
   * Starts the threads a scan needs now, so the first scan does not pay their start-up: the file
   * threads, the first walk's thread and, given an encoding, its tokenizer threads (resolves once
   * they have loaded their tables).
   */
  warm(options?: { encoding?: TokenEncodingName }): Promise<void>;
  /** Starts the next walk's thread unless one waits already: for a process with time to spare between scans. */
  prepareWalk(): void;
  /** This encoding's tokenizer pool, started on first use and kept until close(). */
  tokenPool(encoding: TokenEncodingName): TokenPool;
  /** runScan on this engine's threads; `deps` may replace any of them (`countTokens`: another counter). */
  runScan(input: ScanInput, deps?: Partial<RunScanDeps>, onProgress?: ProgressCallback): Promise<ScanReport>;
  /** inspectTree on this engine's threads. */
  inspect(input: InspectInput, deps?: Partial<ScanDeps>, onProgress?: ProgressCallback): Promise<InspectReport>;
  /** Ends every thread; work in flight rejects, later work is refused. */
  close(): Promise<void>;
}

export function createEngine(options: EngineOptions = {}): Engine {
  const tokenThreads = options.tokenThreads ?? Math.max(1, availableParallelism());
  const io = new IoThreads();
  const scanDeps = threadScanDeps(io);
  const pools = new Map<TokenEncodingName, TokenPool>();
  let closed = false;

  const tokenPool = (encoding: TokenEncodingName): TokenPool => {
    if (closed) throw new Error('the engine is closed');
    let pool = pools.get(encoding);
    if (pool === undefined) {
      pool = createTokenPool({ encoding, threads: tokenThreads });
      pools.set(encoding, pool);
    }
    return pool;
  };

  return {
    async warm({ encoding } = {}) {
      io.prepareFiles();
      io.prepareWalk();
      if (encoding !== undefined) await tokenPool(encoding).warm();
    },
    prepareWalk: () => io.prepareWalk(),
    tokenPool,
    runScan(input, deps = {}, onProgress = () => {}) {
      if (closed) return Promise.reject(new Error('the engine is closed'));
      const started = performance.now();
      let countTokens = deps.countTokens;
      if (countTokens === undefined) {
        const pool = tokenPool(input.encoding);
        // Threads of another encoding, or one replaced after a crash, load while the walk starts.
        pool.warm().catch(() => {});
        countTokens = (contents, signal) => pool.count(contents, signal);
      }
      return scanTree(input, { ...scanDeps, ...deps, countTokens }, onProgress, started);
    },
    inspect(input, deps = {}, onProgress = () => {}) {
      if (closed) return Promise.reject(new Error('the engine is closed'));
      return previewTree(input, { ...scanDeps, ...deps }, onProgress);
    },
    async close() {
      if (closed) return;
      closed = true;
      const owned = [...pools.values()];
      pools.clear();
      await Promise.all([io.close(), ...owned.map((pool) => pool.close())]);
    },
  };
}
