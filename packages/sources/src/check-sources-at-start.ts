// What every process (API or worker) checks of its source settings before it takes work: a git
// credentials file it cannot use stops it, and allowed local roots that are not folders on this
// machine are named in a warning rather than in each refused request.
import type { Config } from '@reposcan/config';
import { missingLocalRootsWarning } from './local/missing-local-roots.js';
import { checkGitCredentialsFile } from './remote/git-credentials-file.js';

export async function checkSourcesAtStart(config: Config, warn: (message: string) => void): Promise<void> {
  await checkGitCredentialsFile(config.gitCredentialsFile);
  const missingRoots = await missingLocalRootsWarning(config.allowedLocalRoots);
  if (missingRoots !== null) warn(missingRoots);
}
