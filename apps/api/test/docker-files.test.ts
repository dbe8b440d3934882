// No Docker engine runs here, so these check what a user of `docker compose up` relies on by
// reading the files themselves: persistent non-evicting Redis, one shared volume, workers that
// scale, a non-root image of a supported Node LTS, and no variable the service does not read.
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CONFIG_VARIABLES } from '@reposcan/config';

const root = fileURLToPath(new URL('../../../', import.meta.url));

interface Service {
  image?: string;
  build?: unknown;
  command?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  ports?: string[];
  container_name?: string;
  depends_on?: Record<string, { condition: string }>;
  deploy?: { replicas?: number };
  healthcheck?: { test?: string[]; disable?: boolean };
}

describe('docker-compose.yml', async () => {
  const compose = parse(await readFile(`${root}docker-compose.yml`, 'utf8'), { merge: true }) as {
    services: Record<string, Service>;
    volumes: Record<string, unknown>;
  };
  const { redis, api, worker } = compose.services as Record<'redis' | 'api' | 'worker', Service>;

  it('runs Redis with an append-only file and the noeviction policy BullMQ needs', () => {
    const command = (redis.command ?? []).join(' ');
    expect(command).toContain('--appendonly yes');
    expect(command).toContain('--maxmemory-policy noeviction');
    expect(redis.volumes?.some((v) => v.endsWith(':/data'))).toBe(true);
  });

  it('gives the api and the workers one shared named volume at their DATA_DIR', () => {
    for (const service of [api, worker]) {
      const dataDir = service.environment?.DATA_DIR;
      expect(dataDir).toBeDefined();
      const mount = service.volumes?.find((v) => v.split(':')[1] === dataDir);
      expect(mount?.split(':')[0]).toBe('scans');
    }
    expect(Object.keys(compose.volumes)).toContain('scans');
  });

  it('runs the api and workers from one image with their roles, on Redis once it is healthy', () => {
    expect(api.image).toBe(worker.image);
    expect(api.environment?.ROLE).toBe('api');
    expect(worker.environment?.ROLE).toBe('worker');
    for (const service of [api, worker]) {
      expect(service.environment?.REDIS_URL).toBe('redis://redis:6379');
      expect(service.depends_on?.redis?.condition).toBe('service_healthy');
    }
  });

  it('lets the worker scale: no fixed name, no host port', () => {
    expect(worker.container_name).toBeUndefined();
    expect(worker.ports).toBeUndefined();
    expect(worker.deploy?.replicas).toBeGreaterThanOrEqual(2);
  });

  it('health-checks each worker on the METRICS_PORT it serves', () => {
    const port = worker.environment?.METRICS_PORT;
    expect(port).toMatch(/^\d+$/);
    expect(worker.healthcheck?.test?.join(' ')).toContain(`http://127.0.0.1:${port}/health`);
  });

  it('publishes the API on the loopback interface only, since it has no authentication', () => {
    expect(api.ports).toEqual(['127.0.0.1:8000:8000']);
  });

  it('sets only variables the service reads', () => {
    const known = new Set(Object.keys(CONFIG_VARIABLES));
    for (const service of [api, worker])
      for (const name of Object.keys(service.environment ?? {})) expect(known, name).toContain(name);
  });
});

describe('Dockerfile', async () => {
  const dockerfile = await readFile(`${root}Dockerfile`, 'utf8');
  const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));

  it('builds from the lockfile and ships only the production install', () => {
    expect(dockerfile).toMatch(/npm ci\b/);
    expect(dockerfile).toContain('npm run build');
    expect(dockerfile).toMatch(/npm prune --omit=dev/);
  });

  it('runs on a Node LTS the code is tested on, as a non-root user, with git and an init', () => {
    expect(runtime).toMatch(/^\nFROM node:(22|24)-/);
    expect(runtime).toMatch(/\nUSER node\n/);
    expect(runtime).toMatch(/apt-get install[^\n]*\bgit\b/);
    expect(runtime).toContain('ENTRYPOINT ["/usr/bin/tini", "--"]');
    expect(runtime).toContain('CMD ["node", "apps/api/dist/main.js"]');
  });

  it("caps glibc's malloc arenas for every process of the image", () => {
    expect(runtime).toMatch(/\nENV [^\n]*\bMALLOC_ARENA_MAX=2\b/);
  });

  it('keeps dependencies, build output and local data out of the build context', async () => {
    const ignored = (await readFile(`${root}.dockerignore`, 'utf8')).split('\n');
    for (const entry of ['.git', '**/node_modules', '**/dist', 'data']) expect(ignored).toContain(entry);
  });
});
