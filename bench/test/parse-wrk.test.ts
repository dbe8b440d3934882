import { describe, expect, it } from 'vitest';
import { parseWrk } from '../lib/wrk.js';

const BASE = { url: 'http://127.0.0.1:1/health', seconds: 1, connections: 8, threads: 2 };

// Real `wrk --latency` output (wrk 4.1.0): percentiles come in us, ms or s.
const OUTPUT = `Running 1s test @ http://127.0.0.1:18777/
  2 threads and 8 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   453.11us    1.03ms  14.96ms   93.11%
    Req/Sec    20.45k     9.75k   33.62k    65.00%
  Latency Distribution
     50%  144.00us
     75%  272.00us
     90%    0.92ms
     99%    1.49s
  40689 requests in 1.00s, 4.81MB read
  Socket errors: connect 0, read 2, write 0, timeout 3
  Non-2xx or 3xx responses: 7
Requests/sec:  40655.22
Transfer/sec:      4.81MB
`;

describe('parseWrk', () => {
  it('reads rate, request count, percentiles in milliseconds, and errors', () => {
    expect(parseWrk(OUTPUT, BASE)).toEqual({
      ...BASE,
      requests: 40689,
      requests_per_sec: 40655.22,
      latency_ms: { p50: 0.144, p75: 0.272, p90: 0.92, p99: 1490 },
      non_2xx: 7,
      socket_errors: 5,
    });
  });

  it('refuses output without a latency distribution (wrk run without --latency)', () => {
    expect(() => parseWrk(OUTPUT.replace(/ {5}99%.*\n/, ''), BASE)).toThrow(/99% latency/);
  });
});
