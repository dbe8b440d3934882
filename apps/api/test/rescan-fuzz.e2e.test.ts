// Rescans of seeded random commits through the whole service: each commit changes contents (what
// a rescan carries or takes from the file cache), and now and then adds, deletes, renames, marks
// executable, links, or edits an ignore file (what makes the rescan clone and walk as usual). After
// every commit the default scan, the one that reuses, must give the bytes a fresh scan
// (`cache: false`) of the same commit gives, and that one the files and texts a scan of the work
// tree as a local folder gives (links aside): a check of the clone that does not go through git.
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  mkdtempSync,
  renameSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { git } from '../../../packages/sources/test/remote/helpers/fixture-repos.js';
import { startGitHttpServer } from '../../../packages/sources/test/remote/helpers/git-http-server.js';
import type { GitHttpServer } from '../../../packages/sources/test/remote/helpers/git-http-server.js';
import { pick, randomContent, seededRandom } from '../../../packages/core/test/scan/random-contents.js';
import type { Rng } from '../../../packages/core/test/scan/random-contents.js';
import { createGrowingRepo } from './support/growing-repo.js';
import { postScan } from './support/scenarios.js';
import { startTestApi } from './support/test-runtime.js';
import type { TestApi } from './support/test-runtime.js';

const NAMES = ['main.ts', 'README.md', 'notes #1.md', 'naïve file.txt', 'data.json', 'q?.sh', 'x.rs', 'logo.png'];
const FOLDERS = ['', 'src/', 'src/deep/', 'docs/', 'ünï/'];
const ROUNDS = 8;

interface Result {
  scan_id: string;
  commit: string | null;
}

describe('a rescan of each random commit writes what a fresh scan of it writes (loopback git server)', () => {
  let base: string;
  let work: string;
  let server: GitHttpServer;
  let api: TestApi;
  let url: string;

  beforeAll(async () => {
    base = mkdtempSync(join(tmpdir(), 'reposcan-rescan-fuzz-'));
    const repo = createGrowingRepo(base, 'fuzz', { partialClones: true });
    work = repo.work;
    server = await startGitHttpServer(repo.served);
    url = `${server.origin}/acme/fuzz`;
    api = await startTestApi({
      GIT_ALLOW_HTTP: 'true',
      GIT_ALLOW_PRIVATE_HOSTS: 'true',
      GIT_ALLOWED_HOSTS: '127.0.0.1',
      SCAN_WAIT_SECONDS: '60',
      // The long contents are over it: blobs the clone leaves on the server.
      MAX_FILE_BYTES: '8192',
      // The work tree itself, scanned as a local folder: what the clone gave the scan, checked apart from git.
      ALLOWED_LOCAL_ROOTS: base,
    });
  });
  afterAll(async () => {
    await api?.close();
    await server?.close();
    rmSync(base, { recursive: true, force: true });
  });

  /** The work tree's tracked regular files and links. */
  const tracked = (): string[] => git(work, 'ls-files', '-z').split('\0').filter(Boolean);
  const write = (path: string, content: Buffer): void => {
    mkdirSync(dirname(join(work, path)), { recursive: true });
    rmSync(join(work, path), { force: true });
    writeFileSync(join(work, path), content);
  };
  const newPath = (rng: Rng): string => `${pick(rng, FOLDERS)}${Math.floor(rng() * 1000)}-${pick(rng, NAMES)}`;

  /** Changes contents mostly, and the tree's shape now and then; commits and pushes. */
  function commitRandomChange(rng: Rng, round: string): void {
    const files = tracked();
    for (const path of files) if (rng() < 0.2) write(path, randomContent(rng));
    const shape = rng();
    const victim = files.length > 0 ? pick(rng, files) : null;
    if (shape < 0.1) write(newPath(rng), randomContent(rng));
    else if (shape < 0.2 && victim) unlinkSync(join(work, victim));
    else if (shape < 0.28 && victim) {
      const to = newPath(rng);
      mkdirSync(dirname(join(work, to)), { recursive: true });
      renameSync(join(work, victim), join(work, to));
    } else if (shape < 0.34 && victim) {
      // A link's target may be gone: only a file is marked.
      if (lstatSync(join(work, victim)).isFile()) chmodSync(join(work, victim), 0o755);
    } else if (shape < 0.4) symlinkSync(victim ?? 'nowhere', join(work, `link-${round}`));
    else if (shape < 0.46) write('.gitignore', Buffer.from(`${pick(rng, ['*.md', 'docs/', '*.json', 'src/deep/'])}\n`));
    git(work, 'add', '-A');
    git(work, 'commit', '-q', '--allow-empty', '-m', `round ${round}`);
    git(work, 'push', '-q', 'origin', 'main');
  }

  const scan = async (body: Record<string, unknown>): Promise<Result> => {
    const response = await postScan(api, { repo_path: url, ...body });
    const envelope = (await response.json()) as { data: Result };
    expect(response.status, JSON.stringify(envelope)).toBe(201);
    return envelope.data;
  };
  const filesReused = async (): Promise<number> => {
    const text = await (await fetch(`${api.baseUrl}/metrics`)).text();
    return Number(/^reposcan_files_reused_total (\d+)$/m.exec(text)?.[1] ?? 0);
  };
  /** The JSON output's files and assets without their links. */
  const filesOf = async (scanId: string): Promise<unknown> => {
    type Entry = { url?: string };
    const json = Buffer.from(await download(scanId, 'json'), 'latin1').toString();
    // Lite outputs list no assets.
    const output = JSON.parse(json) as { files: Entry[]; assets?: Entry[] };
    return [...output.files, ...(output.assets ?? [])].map(({ url: _url, ...entry }) => entry);
  };
  const download = async (scanId: string, format: string): Promise<string> => {
    const response = await fetch(`${api.baseUrl}/v1/download/${scanId}?format=${format}`);
    expect(response.status).toBe(200);
    return Buffer.from(await response.arrayBuffer()).toString('latin1');
  };

  it.each<[number, Record<string, unknown>]>([
    [1, {}],
    [2, { compress: 'signatures', remove_comments: true }],
  ])('seed %i, options %j', async (seed, options) => {
    const rng = seededRandom(seed);
    // A tree of its own: everything but the history goes, ignored files too.
    for (const name of readdirSync(work))
      if (name !== '.git') rmSync(join(work, name), { recursive: true, force: true });
    for (let i = 0; i < 12; i++) write(newPath(rng), randomContent(rng));
    git(work, 'add', '-A');
    const reusedBefore = await filesReused();
    for (let round = 0; round < ROUNDS; round++) {
      commitRandomChange(rng, `${seed}-${round}`);
      const head = git(work, 'rev-parse', 'HEAD');
      const reused = await scan(options);
      const fresh = await scan({ ...options, cache: false });
      expect(reused.commit).toBe(head);
      expect(fresh.commit).toBe(head);
      for (const format of ['txt', 'md', 'json'])
        expect(await download(reused.scan_id, format), `round ${round}, ${format}`).toBe(
          await download(fresh.scan_id, format),
        );
      // The same files and texts as the work tree holds, links aside.
      const local = await scan({ ...options, repo_path: work });
      expect(await filesOf(fresh.scan_id), `round ${round}`).toEqual(await filesOf(local.scan_id));
    }
    // The comparisons mean something only if the rescans did reuse files.
    expect(await filesReused()).toBeGreaterThan(reusedBefore);
  });
});
