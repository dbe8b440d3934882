// What the benchmark needs from the machine, checked before anything long starts, with what to do.
import { execFileSync } from 'node:child_process';
import { connect } from 'node:net';

function has(command: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function redisAnswers(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port || 6379) });
    socket.setTimeout(2000);
    socket.once('connect', () => {
      socket.end();
      resolve(true);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(false));
  });
}

export async function preflight(needs: { load: boolean; micro: boolean }): Promise<void> {
  const problems: string[] = [];
  for (const command of ['git', 'tar', 'npm']) if (!has(command)) problems.push(`\`${command}\` is not on PATH.`);
  if (needs.load && !has('wrk'))
    problems.push(
      '`wrk` is not installed (Debian: apt-get install -y wrk), or leave out the load section: --sections real,real2x,synthetic,micro',
    );
  if (needs.micro && !has('python3'))
    problems.push('`python3` is not installed; the zip micro-benchmarks build their archives with it.');
  const redis = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  if (!(await redisAnswers(redis)))
    problems.push(
      `Redis does not answer at ${redis}: start one (redis-server --save '' --daemonize yes) or set REDIS_URL.`,
    );
  if (process.platform !== 'linux')
    problems.push('Peak RSS of the API and worker is read from /proc: the benchmark runs on Linux only.');
  if (problems.length > 0) throw new Error(`npm run bench cannot start:\n- ${problems.join('\n- ')}`);
}
