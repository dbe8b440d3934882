import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, environmentWithEnvFile, loadConfig, readEnvFile } from '../src/index.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'reposcan-env-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function writeEnv(text: string): void {
  writeFileSync(join(dir, '.env'), text);
}

describe('.env in the working directory', () => {
  it('fills in what the environment does not set, and the environment wins', () => {
    writeEnv('PORT=9100\nLOG_LEVEL=debug\n# a comment\n\nexport QUEUE_PREFIX="from-file" # trailing comment\n');
    const env = environmentWithEnvFile({ PORT: '9200' }, dir);
    expect(env).toMatchObject({ PORT: '9200', LOG_LEVEL: 'debug', QUEUE_PREFIX: 'from-file' });
    expect(loadConfig(env, { version: 'x' })).toMatchObject({
      port: 9200,
      logLevel: 'debug',
      queuePrefix: 'from-file',
    });
  });

  it('an empty value in the environment still wins over the file', () => {
    writeEnv('REDIS_URL=redis://127.0.0.1:6379\n');
    expect(loadConfig(environmentWithEnvFile({ REDIS_URL: '' }, dir), { version: 'x' })).toMatchObject({
      redis: null,
      embedded: true,
    });
  });

  it('leaves the environment object it was given unchanged', () => {
    writeEnv('PORT=9100\n');
    const given = { LOG_LEVEL: 'warn' };
    environmentWithEnvFile(given, dir);
    expect(given).toEqual({ LOG_LEVEL: 'warn' });
  });

  it('a missing file is fine: the environment as it is', () => {
    const given = { PORT: '9300' };
    expect(environmentWithEnvFile(given, dir)).toEqual(given);
    expect(readEnvFile(join(dir, '.env'))).toBeNull();
  });

  it('reads quoted values over several lines and CRLF line ends', () => {
    writeEnv('A="one\ntwo"\r\nB=plain\r\nC=\'single\'\r\n');
    expect(readEnvFile(join(dir, '.env'))).toEqual({ A: 'one\ntwo', B: 'plain', C: 'single' });
  });

  it('the shipped .env.example, copied to .env, loads as the defaults', () => {
    copyFileSync(new URL('../../../.env.example', import.meta.url), join(dir, '.env'));
    expect(loadConfig(environmentWithEnvFile({}, dir), { version: 'x' })).toEqual(loadConfig({}, { version: 'x' }));
  });

  it('a malformed line is a ConfigError naming the file and the line', () => {
    writeEnv('PORT=9100\nthis is not an assignment\nLOG_LEVEL=debug\n=novalue\n');
    let error: unknown;
    try {
      environmentWithEnvFile({}, dir);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const file = join(dir, '.env');
    expect((error as ConfigError).problems).toEqual([
      `${file} line 2: not NAME=value, a comment (#) or blank; fix or remove the line`,
      `${file} line 4: not NAME=value, a comment (#) or blank; fix or remove the line`,
    ]);
    expect((error as ConfigError).message).toMatch(/^Invalid configuration \(2 problems\):/);
  });

  it('a bad value from the file is reported like one from the environment', () => {
    writeEnv('PORT=eighty\n');
    expect(() => loadConfig(environmentWithEnvFile({}, dir), { version: 'x' })).toThrow(/PORT="eighty"/);
  });
});
