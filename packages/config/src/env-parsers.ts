import { isIP } from 'node:net';
import { isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import { hasHashTag } from './redis-target.js';
import type { RedisNode } from './redis-target.js';

/** A parser's verdict on a bad value: completes the sentence "expected …". */
export class Expected {
  constructor(readonly what: string) {}
}

export type Parser<T> = (text: string) => T | Expected;

/**
 * The zod schema of one variable. Surrounding blanks are trimmed and a blank value counts as
 * unset (`PORT=` in an env file means "the default"); `parse` sees undefined when unset.
 */
export function fromEnv<T>(parse: (text: string | undefined) => T | Expected) {
  return z
    .string()
    .optional()
    .transform((raw, ctx): T => {
      const text = raw?.trim();
      const value = parse(text === '' ? undefined : text);
      if (!(value instanceof Expected)) return value;
      ctx.addIssue({ code: 'custom', message: `expected ${value.what}` });
      return z.NEVER;
    });
}

/** Unset parses `defaultText` itself, so the documented default is exactly the one applied. */
export function withDefault<T>(defaultText: string, parse: Parser<T>) {
  return fromEnv((text) => parse(text ?? defaultText));
}

export function unsetAs<T, U>(whenUnset: U, parse: Parser<T>): (text: string | undefined) => T | U | Expected {
  return (text) => (text === undefined ? whenUnset : parse(text));
}

export function wholeNumber(min: number, max: number, unit = ''): Parser<number> {
  const what = `a whole number${unit ? ` of ${unit}` : ''} from ${min} to ${max}`;
  return (text) => {
    const n = /^\d+$/.test(text) ? Number(text) : Number.NaN;
    return Number.isSafeInteger(n) && n >= min && n <= max ? n : new Expected(what);
  };
}

/** A share such as 0.05; 1 is excluded because a floor of 100 % free would refuse all work. */
export const fraction: Parser<number> = (text) => {
  const n = /^(?:\d+(?:\.\d*)?|\.\d+)$/.test(text) ? Number(text) : Number.NaN;
  return n >= 0 && n < 1 ? n : new Expected('a decimal from 0 up to (not including) 1, e.g. 0.05');
};

const TRUE_WORDS = ['true', '1', 'yes'];
const FALSE_WORDS = ['false', '0', 'no'];
export const flag: Parser<boolean> = (text) => {
  const word = text.toLowerCase();
  if (TRUE_WORDS.includes(word)) return true;
  if (FALSE_WORDS.includes(word)) return false;
  return new Expected('true or false (or 1/0, yes/no)');
};

export function oneOf<const V extends string>(values: readonly V[]): Parser<V> {
  return (text) => values.find((v) => v === text.toLowerCase()) ?? new Expected(`one of ${values.join(', ')}`);
}

const HOST_NAME = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i;

export const listenHost: Parser<string> = (text) =>
  isIP(text) !== 0 || HOST_NAME.test(text) ? text : new Expected('an IP address or a host name');

export const absolutePath: Parser<string> = (text) =>
  text.includes('\0') ? new Expected('a folder path') : resolve(text);

export const redisUrl: Parser<string> = (text) => {
  const url = URL.parse(text);
  return url !== null && (url.protocol === 'redis:' || url.protocol === 'rediss:') && url.hostname !== ''
    ? text
    : new Expected('a redis:// or rediss:// URL, e.g. redis://127.0.0.1:6379');
};

export const queuePrefix: Parser<string> = (text) => {
  if (!/^[A-Za-z0-9{][A-Za-z0-9._:{}-]{0,63}$/.test(text))
    return new Expected('1 to 64 letters, digits, ".", "_", ":", "-", "{" or "}"');
  // A brace that is not a whole hash tag would spread one queue's keys over a cluster's slots.
  if (/[{}]/.test(text) && !hasHashTag(text))
    return new Expected('a hash tag with text between "{" and "}", e.g. {reposcan}, when it has braces');
  return text;
};

/** `host:port` entries, comma-separated (`[v6]:port` for IPv6): Redis Cluster nodes or sentinels. */
export const redisNodes: Parser<readonly RedisNode[]> = (text) => {
  const entries = splitList(text, ',');
  const nodes = entries.map((entry): RedisNode | null => {
    const m = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(entry);
    const host = m?.[1] ?? m?.[2] ?? '';
    const port = Number(m?.[3]);
    const hostOk = m?.[1] !== undefined ? isIP(host) === 6 : isIP(host) === 4 || HOST_NAME.test(host);
    return m && hostOk && port >= 1 && port <= 65535 ? { host, port } : null;
  });
  const bad = entries.filter((_, i) => nodes[i] === null);
  if (entries.length === 0 || bad.length > 0)
    return new Expected(
      `a comma list of host:port entries, e.g. 10.0.0.1:7000,10.0.0.2:7000${bad.length > 0 ? ` (not valid: ${bad.join(', ')})` : ''}`,
    );
  return nodes as RedisNode[];
};

export const anyText: Parser<string> = (text) => text;

/**
 * A 256-bit key, as 64 hex digits or base64 (standard or URL-safe) of 32 bytes; normalised to hex.
 * The message never repeats the value (load-config redacts it too).
 */
export const key256: Parser<string> = (text) => {
  if (/^[0-9a-f]{64}$/i.test(text)) return text.toLowerCase();
  const bytes = /^[A-Za-z0-9+/_-]{43}={0,1}$/.test(text) ? Buffer.from(text, 'base64') : null;
  return bytes?.length === 32
    ? bytes.toString('hex')
    : new Expected('32 random bytes as 64 hex digits or base64, e.g. the output of openssl rand -base64 32');
};

function splitList(text: string, separator: string): string[] {
  return text
    .split(separator)
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** `:`-separated absolute folders, normalised (`/a/b/../c/` → `/a/c`); realpaths are checked per request. */
export const localRoots: Parser<readonly string[]> = (text) => {
  const entries = splitList(text, ':');
  const bad = entries.filter((e) => !isAbsolute(e) || e.includes('\0'));
  if (bad.length > 0) return new Expected(`absolute folder paths separated by ":" (not absolute: ${bad.join(', ')})`);
  return [...new Set(entries.map((e) => resolve(e)))];
};

const PORT = /^\d{1,5}$/;
function isPort(text: string | undefined): boolean {
  return text === undefined || (PORT.test(text) && Number(text) >= 1 && Number(text) <= 65535);
}

/** `host`, `host:port`, `1.2.3.4:port` or `[v6]:port`; already lower-cased. */
function isHostEntry(entry: string): boolean {
  const v6 = /^\[([^\]]+)\](?::(.*))?$/.exec(entry);
  if (v6) return isIP(v6[1] ?? '') === 6 && isPort(v6[2]);
  const [host = '', port, ...rest] = entry.split(':');
  return rest.length === 0 && (isIP(host) === 4 || HOST_NAME.test(host)) && isPort(port);
}

/** `*` alone means any public host; otherwise host names (any port) or host:port, lower-cased and de-duplicated. */
export const gitHosts: Parser<'*' | readonly string[]> = (text) => {
  const entries = splitList(text.toLowerCase(), ',');
  const what = 'a comma list of host names or host:port entries, or "*" alone';
  if (entries.includes('*')) return entries.length === 1 ? '*' : new Expected(what);
  const bad = entries.filter((e) => !isHostEntry(e));
  if (entries.length === 0 || bad.length > 0)
    return new Expected(`${what}${bad.length > 0 ? ` (not valid: ${bad.join(', ')})` : ''}`);
  return [...new Set(entries)];
};

/** `*`, or a comma list of origins such as `https://app.example.com` (scheme, host, optional port; no path). */
export const corsOrigins: Parser<'*' | readonly string[]> = (text) => {
  const entries = splitList(text, ',');
  const what = 'a comma list of origins such as https://app.example.com, or "*" alone';
  if (entries.includes('*')) return entries.length === 1 ? '*' : new Expected(what);
  const origins = entries.map(toOrigin);
  const bad = entries.filter((_, i) => origins[i] === null);
  if (entries.length === 0 || bad.length > 0)
    return new Expected(`${what}${bad.length > 0 ? ` (not valid: ${bad.join(', ')})` : ''}`);
  return [...new Set(origins as string[])];
};

function toOrigin(entry: string): string | null {
  const url = URL.parse(entry);
  const bare =
    url !== null &&
    url.pathname === '/' &&
    url.search === '' &&
    url.hash === '' &&
    url.username === '' &&
    url.password === '';
  return bare && (url.protocol === 'https:' || url.protocol === 'http:') && !entry.endsWith('?') && !entry.endsWith('#')
    ? url.origin
    : null;
}

const PROXY_PRESETS = ['loopback', 'linklocal', 'uniquelocal'];

/** Express `trust proxy`: true/false, a hop count, or a comma list of addresses, subnets and presets. */
export const trustProxy: Parser<boolean | number | readonly string[]> = (text) => {
  const word = text.toLowerCase();
  if (word === 'true' || word === 'false') return word === 'true';
  if (/^\d+$/.test(text)) return wholeNumber(0, 100)(text);
  const entries = splitList(text, ',');
  const bad = entries.filter((e) => !PROXY_PRESETS.includes(e.toLowerCase()) && !isSubnet(e));
  if (entries.length === 0 || bad.length > 0) {
    return new Expected(
      `true, false, a hop count, or a comma list of IP addresses, subnets (10.0.0.0/8) and loopback/linklocal/uniquelocal (not valid: ${bad.join(', ')})`,
    );
  }
  return entries.map((e) => (PROXY_PRESETS.includes(e.toLowerCase()) ? e.toLowerCase() : e));
};

function isSubnet(entry: string): boolean {
  const [address = '', mask, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (mask === undefined) return true;
  if (/^\d{1,3}$/.test(mask)) return Number(mask) <= (family === 4 ? 32 : 128);
  return family === 4 && isIP(mask) === 4;
}

export const FAULT_POINTS = ['accept', 'clone', 'extract', 'scan', 'publish'] as const;
export type FaultPoint = (typeof FAULT_POINTS)[number];

/** What a process does when it reaches a fault point: die, hang (with `ms`, for that long), or fail as a full disk would. */
export interface FaultRule {
  point: FaultPoint;
  action: 'crash' | 'block' | 'enospc';
  /** block only: how long; unset blocks until the process is killed. */
  ms?: number;
  /** Only scans whose repository path or upload name contains this text; unset: every scan. */
  match?: string;
}

/** `point:action[=ms][@text]`, comma-separated, e.g. `publish:block=6000,scan:crash@poison`. */
export const faultRules: Parser<readonly FaultRule[]> = (text) => {
  const rules: FaultRule[] = [];
  for (const entry of splitList(text, ',')) {
    const m = /^([a-z]+):(crash|block|enospc)(?:=(\d+))?(?:@(.+))?$/.exec(entry);
    const point = FAULT_POINTS.find((p) => p === m?.[1]);
    if (!m || point === undefined || (m[3] !== undefined && m[2] !== 'block')) {
      return new Expected(
        `point:action[=ms][@text] entries, points ${FAULT_POINTS.join(', ')}, actions crash, block[=ms], enospc (not valid: ${entry})`,
      );
    }
    rules.push({
      point,
      action: m[2] as FaultRule['action'],
      ...(m[3] === undefined ? {} : { ms: Number(m[3]) }),
      ...(m[4] === undefined ? {} : { match: m[4] }),
    });
  }
  return rules;
};
