import { ScanError } from '@reposcan/contracts';
import type { ScanRequestRecord } from '@reposcan/contracts';
import type { WorkerRegistry } from '@reposcan/queue';
import { POLICY_VARIABLE, policyRefusal } from '@reposcan/sources';
import type { SourcePolicy } from '@reposcan/sources';

/** One read of the live workers serves the requests of this long (a flood costs Redis nothing more). */
const LIVE_WORKERS_CACHE_MS = 2_000;

/**
 * In Redis mode the API and the workers read their own environments. A source this API accepts
 * but every live worker would refuse is refused at submit (503 NO_WORKER_ACCEPTS) instead of
 * queued to fail. With no live worker announced (none started yet, or Redis unreadable) nothing
 * is refused here: the scan waits for a worker, and the worker's own check still applies.
 */
export class WorkerCoverage {
  private cached: { at: number; policies: Promise<(SourcePolicy | null)[]> } | null = null;

  constructor(private readonly registry: WorkerRegistry) {
    // Connects now, so the first request is judged too.
    void registry.live();
  }

  async assertSomeWorkerAccepts(source: ScanRequestRecord['source'], addresses: readonly string[]): Promise<void> {
    const policies = await this.livePolicies();
    // A worker whose announcement cannot be judged (another version) may accept it.
    if (policies.length === 0 || policies.includes(null)) return;
    const refusals = await Promise.all(
      policies.map((policy) => (policy ? policyRefusal(source, policy, addresses) : Promise.resolve(null))),
    );
    if (refusals.some((refusal) => refusal === null)) return;
    const variables = [
      ...new Set(
        refusals.map((refusal) => (refusal ? POLICY_VARIABLE[refusal.code] : undefined)).filter((v) => v !== undefined),
      ),
    ];
    const workers =
      policies.length === 1
        ? 'the one live worker refuses it under its'
        : `all ${policies.length} live workers refuse it under their`;
    throw new ScanError(
      'NO_WORKER_ACCEPTS',
      `This server's API accepts this source, but ${workers} own configuration (${variables.join(', ')}), so it was not queued. An operator should give the workers the same ${variables.join(' and ')} as the API.`,
    );
  }

  private livePolicies(): Promise<(SourcePolicy | null)[]> {
    const now = Date.now();
    if (this.cached === null || now - this.cached.at > LIVE_WORKERS_CACHE_MS) {
      this.cached = {
        at: now,
        policies: this.registry
          .live()
          .then((announced) => announced.map((a) => (isSourcePolicy(a.sources) ? a.sources : null))),
      };
    }
    return this.cached.policies;
  }
}

/** An announcement from a worker of another version may lack the policy or spell it otherwise. */
function isSourcePolicy(value: unknown): value is SourcePolicy {
  const v = value as Partial<SourcePolicy> | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    (v.allowedLocalRoots === null || Array.isArray(v.allowedLocalRoots)) &&
    (v.allowedHosts === '*' || Array.isArray(v.allowedHosts)) &&
    typeof v.allowHttp === 'boolean' &&
    typeof v.allowPrivateHosts === 'boolean'
  );
}
