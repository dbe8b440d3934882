import { describe, expect, it } from 'vitest';
import { describeSourcePolicy } from '../src/index.js';

describe('describeSourcePolicy', () => {
  it('names each setting with the variable that decides it', () => {
    expect(
      describeSourcePolicy({
        allowedLocalRoots: ['/srv/a', '/srv/b'],
        allowedHosts: '*',
        allowHttp: true,
        allowPrivateHosts: true,
      }),
    ).toBe(
      'accepts local paths under /srv/a, /srv/b (ALLOWED_LOCAL_ROOTS); git from any host (GIT_ALLOWED_HOSTS), https or http (GIT_ALLOW_HTTP), private addresses too (GIT_ALLOW_PRIVATE_HOSTS); uploaded ZIPs',
    );
  });

  it('says when local paths are refused', () => {
    expect(
      describeSourcePolicy({
        allowedLocalRoots: null,
        allowedHosts: ['git.example.com'],
        allowHttp: false,
        allowPrivateHosts: false,
      }),
    ).toBe(
      'accepts no local paths (ALLOWED_LOCAL_ROOTS unset); git from git.example.com (GIT_ALLOWED_HOSTS), https only (GIT_ALLOW_HTTP=false), public addresses only (GIT_ALLOW_PRIVATE_HOSTS=false); uploaded ZIPs',
    );
  });
});
