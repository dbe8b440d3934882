import { describe, expect, it } from 'vitest';
import { createMemoryWorkerRegistry } from '@reposcan/queue';
import type { WorkerAnnouncement } from '@reposcan/queue';
import type { SourcePolicy } from '@reposcan/sources';
import { WorkerCoverage } from '../src/services/worker-coverage.js';

const DEFAULT_HOSTS = ['github.com', 'gitlab.com'];
const policy = (over: Partial<SourcePolicy> = {}): SourcePolicy => ({
  allowedLocalRoots: ['/srv/repos'],
  allowedHosts: DEFAULT_HOSTS,
  allowHttp: false,
  allowPrivateHosts: false,
  ...over,
});
const local = { type: 'local', repo_path: '/srv/repos/app' } as const;
const remote = (url: string) => ({ type: 'remote', repo_path: url, branch: null }) as const;
const PUBLIC = ['140.82.112.3'];

/** A coverage over workers that announced `announcements`. */
function coverage(...announcements: WorkerAnnouncement[]): WorkerCoverage {
  const registry = createMemoryWorkerRegistry();
  for (const a of announcements) registry.announce(a);
  return new WorkerCoverage(registry);
}

async function refusal(
  c: WorkerCoverage,
  source: Parameters<WorkerCoverage['assertSomeWorkerAccepts']>[0],
  addresses: string[] = [],
): Promise<{ code: string; message: string } | null> {
  try {
    await c.assertSomeWorkerAccepts(source, addresses);
    return null;
  } catch (error) {
    return error as { code: string; message: string };
  }
}

describe('refusing at submit what no live worker accepts', () => {
  it('no live worker: nothing is refused (the scan waits for one)', async () => {
    expect(await refusal(coverage(), local)).toBeNull();
  });

  it('a worker without roots refuses local paths; one with roots may accept them (it judges containment itself)', async () => {
    const none = await refusal(coverage({ sources: policy({ allowedLocalRoots: null }) }), local);
    expect(none).toMatchObject({ code: 'NO_WORKER_ACCEPTS' });
    expect(none?.message).toBe(
      "This server's API accepts this source, but the one live worker refuses it under its own configuration (ALLOWED_LOCAL_ROOTS), so it was not queued. An operator should give the workers the same ALLOWED_LOCAL_ROOTS as the API.",
    );
    expect(await refusal(coverage({ sources: policy({ allowedLocalRoots: ['/elsewhere'] }) }), local)).toBeNull();
  });

  it('one accepting worker among refusing ones is enough', async () => {
    expect(
      await refusal(coverage({ sources: policy({ allowedLocalRoots: null }) }, { sources: policy() }), local),
    ).toBeNull();
  });

  it('remote URLs are judged on host, scheme and the addresses the API resolved', async () => {
    const gitea = remote('https://git.example.com/team/app');
    const refused = await refusal(coverage({ sources: policy() }, { sources: policy() }), gitea, PUBLIC);
    expect(refused?.message).toContain(
      'all 2 live workers refuse it under their own configuration (GIT_ALLOWED_HOSTS)',
    );
    expect(await refusal(coverage({ sources: policy({ allowedHosts: '*' }) }), gitea, PUBLIC)).toBeNull();
    const http = await refusal(
      coverage({ sources: policy({ allowedHosts: '*' }) }),
      remote('http://git.example.com/team/app'),
      PUBLIC,
    );
    expect(http?.message).toContain('(GIT_ALLOW_HTTP)');
    const privateHost = await refusal(coverage({ sources: policy({ allowedHosts: '*' }) }), gitea, ['10.0.0.7']);
    expect(privateHost?.message).toContain('(GIT_ALLOW_PRIVATE_HOSTS)');
    expect(
      await refusal(coverage({ sources: policy({ allowedHosts: '*', allowPrivateHosts: true }) }), gitea, ['10.0.0.7']),
    ).toBeNull();
  });

  it('names every variable when the workers refuse for different reasons', async () => {
    const c = coverage(
      { sources: policy({ allowedHosts: ['gitlab.com'], allowHttp: true }) },
      { sources: policy({ allowedHosts: '*' }) },
    );
    const refused = await refusal(c, remote('http://github.com/a/b'), PUBLIC);
    expect(refused?.message).toContain('(GIT_ALLOWED_HOSTS, GIT_ALLOW_HTTP)');
    expect(refused?.message).toContain('the same GIT_ALLOWED_HOSTS and GIT_ALLOW_HTTP as the API');
  });

  it('uploads are never refused here, and a worker whose announcement it cannot read may accept anything', async () => {
    expect(
      await refusal(coverage({ sources: policy({ allowedLocalRoots: null }) }), {
        type: 'upload',
        file_name: 'repo.zip',
      }),
    ).toBeNull();
    expect(await refusal(coverage({ sources: policy({ allowedLocalRoots: null }) }, { version: 2 }), local)).toBeNull();
  });
});
