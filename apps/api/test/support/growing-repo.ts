// A repository that gains commits during a test: a bare `acme/<name>.git` under `served/`, for
// a loopback git server, and a work tree that commits and pushes to it.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { git } from '../../../../packages/sources/test/remote/helpers/fixture-repos.js';

export interface GrowingRepo {
  /** What startGitHttpServer serves: `<origin>/acme/<name>` is the repository. */
  served: string;
  /** The work tree that commits and pushes to it (its remote `origin`, branch `main`). */
  work: string;
  /** Writes the files, commits and pushes them; resolves to the new commit's id. */
  commit(files: Record<string, string | Buffer>, message: string): string;
}

export function createGrowingRepo(base: string, name: string, options: { partialClones?: boolean } = {}): GrowingRepo {
  const served = join(base, 'served');
  const owner = join(served, 'acme');
  mkdirSync(owner, { recursive: true });
  git(owner, 'init', '-q', '--bare', '-b', 'main', `${name}.git`);
  if (options.partialClones) {
    // As GitHub does: partial clones, and fetching blobs by id.
    git(join(owner, `${name}.git`), 'config', 'uploadpack.allowFilter', 'true');
    git(join(owner, `${name}.git`), 'config', 'uploadpack.allowAnySHA1InWant', 'true');
  }
  const work = join(base, `work-${name}`);
  mkdirSync(work);
  git(work, 'init', '-q', '-b', 'main');
  git(work, 'remote', 'add', 'origin', join(owner, `${name}.git`));
  return {
    served,
    work,
    commit(files, message) {
      for (const [path, text] of Object.entries(files)) {
        mkdirSync(join(work, path, '..'), { recursive: true });
        writeFileSync(join(work, path), text);
      }
      git(work, 'add', '-A');
      git(work, 'commit', '-q', '-m', message);
      git(work, 'push', '-q', 'origin', 'main');
      return git(work, 'rev-parse', 'HEAD');
    },
  };
}
