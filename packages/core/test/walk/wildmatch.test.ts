// Git's glob matcher on its own: a table of cases written from git's rules (`man gitignore`, and
// git's matcher for the corners), pathological patterns that must end with the right verdict,
// and every way of solving a match giving git's own result on random patterns.
import { describe, expect, it } from 'vitest';
import { compileGlob, globMatches, globResultCode } from '../../src/walk/wildmatch.js';
import { mulberry32 } from '../tokens/seeded-random.js';

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

function matches(pattern: string, text: string, pathname: boolean): boolean {
  const t = bytes(text);
  return globMatches(compileGlob(bytes(pattern), pathname), t, 0, t.length);
}

/** [pattern, text, matches with `/` special, matches against a name alone]. */
type Case = [string, string, boolean, boolean];

const CASES: Case[] = [
  // literals
  ['foo', 'foo', true, true],
  ['foo', 'fo', false, false],
  ['foo', 'fooo', false, false],
  ['', '', true, true],
  ['', 'a', false, false],
  ['Foo', 'foo', false, false],
  // ?
  ['???', 'abc', true, true],
  ['??', 'abc', false, false],
  ['a?c', 'a/c', false, true],
  ['?', '', false, false],
  // *
  ['*', 'foo', true, true],
  ['*', '', true, true],
  ['*', 'foo/bar', false, true],
  ['f*', 'foo', true, true],
  ['*o', 'foo', true, true],
  ['*x*', 'foo', false, false],
  ['f*o*o', 'foo', true, true],
  ['*.txt', 'a.b.txt', true, true],
  ['*.txt', 'dir/a.txt', false, true],
  ['a*b*c*d*e*f*g*h*i*j', 'aXbXcXdXeXfXgXhXiXj', true, true],
  ['a*b*c*d*e*f*g*h*i*j', 'aXbXcXdXeXfXgXhXiX', false, false],
  ['a/*', 'a/b', true, true],
  ['a/*', 'a/b/c', false, true],
  ['a/*/c', 'a/b/c', true, true],
  ['*/b', 'a/b', true, true],
  ['*/b', 'a/c/b', false, true],
  ['a/*b', 'a/x/b', false, true],
  // escapes
  ['\\*', '*', true, true],
  ['\\*', 'a', false, false],
  ['\\?', '?', true, true],
  ['\\[ab]', '[ab]', true, true],
  ['\\a', 'a', true, true],
  ['a\\', 'a', false, false],
  ['a\\', 'a\\', false, false],
  ['a\\ ', 'a ', true, true],
  // bracket expressions
  ['[abc]', 'b', true, true],
  ['[abc]', 'd', false, false],
  ['[a-c]', 'b', true, true],
  ['[c-a]', 'b', false, false],
  ['[!a-c]', 'd', true, true],
  ['[^a-c]', 'b', false, false],
  ['[]]', ']', true, true],
  ['[]a]', 'a', true, true],
  ['[!]]', 'a', true, true],
  ['[!]]', ']', false, false],
  ['[a-]', '-', true, true],
  ['[-a]', '-', true, true],
  ['[a-c-e]', 'd', false, false],
  ['[a-c-e]', '-', true, true],
  ['[a-c-e]', 'e', true, true],
  ['[\\]]', ']', true, true],
  ['[a\\-c]', 'b', false, false],
  ['[a\\-c]', '-', true, true],
  ['[a-\\c]', 'b', true, true],
  ['[/]', '/', false, true],
  ['[!a]', '/', false, true],
  ['a[/]b', 'a/b', false, true],
  // classes, with git's own ASCII table
  ['[[:alpha:]]', 'q', true, true],
  ['[[:alpha:]]', '1', false, false],
  ['[[:digit:][:upper:]]', 'Q', true, true],
  ['[[:digit:][:upper:]]', 'q', false, false],
  ['[[:space:]]', '\t', true, true],
  ['[[:space:]]', '\r', true, true],
  ['[[:space:]]', '\v', false, false],
  ['[[:space:]]', '\f', false, false],
  ['[[:blank:]]', ' ', true, true],
  ['[[:blank:]]', '\n', false, false],
  ['[[:punct:]]', '_', true, true],
  ['[[:punct:]]', '~', true, true],
  ['[[:punct:]]', 'a', false, false],
  ['[[:xdigit:]]', 'F', true, true],
  ['[[:xdigit:]]', 'g', false, false],
  ['[[:print:]]', ' ', true, true],
  ['[[:graph:]]', ' ', false, false],
  ['[[:cntrl:]]', '\x7f', true, true],
  ['[[:lower:]]', 'A', false, false],
  ['[[:upper:]]', 'A', true, true],
  ['[[:alnum:]]', '7', true, true],
  ['[[:alpha:]]?', 'é', false, false],
  ['[![:alpha:]]?', 'é', true, true],
  ['[[:alpha]', ':', true, true],
  ['[[:alpha]', 'x', false, false],
  ['[[:]', ':', true, true],
  // malformed: git gives up, nothing matches
  ['[[:foo:]]', 'f', false, false],
  ['[[:foo:]]*', 'anything', false, false],
  ['x[[::]]', 'x:', false, false],
  ['[[:alpha:]', 'a', false, false],
  ['[', '[', false, false],
  ['[a', 'a', false, false],
  ['[!', '!', false, false],
  ['a[', 'a[', false, false],
  ['[\\', '\\', false, false],
  ['[a\\', 'a', false, false],
  // **
  ['**', 'a/b/c', true, true],
  ['**', '', true, true],
  ['***', 'a/b', true, true],
  ['a/**', 'a/b/c', true, true],
  ['a/**', 'a/', true, true],
  ['a/**', 'a', false, false],
  ['**/b', 'b', true, false],
  ['**/b', 'a/b', true, true],
  ['**/b', 'a/c/b', true, true],
  ['**/b', 'ab', false, false],
  ['**/b', 'a/cb', false, false],
  ['a/**/b', 'a/b', true, false],
  ['a/**/b', 'a/x/y/b', true, true],
  ['a/**/b', 'a/xb', false, false],
  ['a/**/b', 'ax/b', false, false],
  ['**/a/**/b', 'x/a/b', true, false],
  // `**` that is not a whole name is a `*`
  ['a**/b', 'a/b', true, true],
  ['a**/b', 'ax/y/b', false, true],
  ['a***', 'ab/c', false, true],
  ['**x', 'a/x', false, true],
  ['**x', 'ax', true, true],
  ['x**', 'x/y', false, true],
  ['x/**y', 'x/a/y', false, true],
  ['x/**y', 'x/ay', true, true],
  // `**` before an escaped slash spans folders, but does not also try matching none
  ['**\\/b', 'a/b', true, true],
  ['**\\/b', 'b', false, false],
  // one byte at a time: é is two
  ['caf?', 'café', false, false],
  ['caf??', 'café', true, true],
  ['caf[!a]?', 'café', true, true],
  ['*é', 'café', true, true],
  ['?', 'é', false, false],
  ['??', 'é', true, true],
  ['[é]', 'é', false, false],
  ['[é][é]', 'é', true, true],
  ['日本/*', '日本/語', true, true],
];

describe('wildmatch, as git matches', () => {
  it.each(CASES)('%j against %j: %s with / special, %s against a name', (pattern, text, pathname, name) => {
    expect(matches(pattern, text, true)).toBe(pathname);
    expect(matches(pattern, text, false)).toBe(name);
  });
});

describe('patterns that make git backtrack exponentially', () => {
  const deepA = `${'a/'.repeat(45)}c`;
  const tenStarStars = 'a/**/a/**/a/**/a/**/a/**/a/**/a/**/a/**/a/**/a/**/b';

  it('a/**/a/…/b (10 times **) against a 45-deep path of a: the right verdict', () => {
    expect(tenStarStars).toHaveLength(51);
    expect(matches(tenStarStars, deepA, true)).toBe(false);
    expect(matches(tenStarStars, `${'a/'.repeat(45)}b`, true)).toBe(true);
    expect(matches(tenStarStars, `${'a/'.repeat(9)}b`, true)).toBe(false);
    expect(matches(tenStarStars, `${'a/'.repeat(10)}b`, true)).toBe(true);
  });

  it('many single stars against a long name', () => {
    expect(matches(`${'*a'.repeat(40)}*b`, 'a'.repeat(200), false)).toBe(false);
    expect(matches(`${'*a'.repeat(40)}*b`, `${'a'.repeat(200)}b`, false)).toBe(true);
    expect(matches(`${'*a'.repeat(40)}*b`, `${'a'.repeat(39)}b`, false)).toBe(false);
  });

  it('more star runs than are solved by recursion (bottom-up), in a long path', () => {
    const pattern = `${'**/a'.repeat(100)}/b`;
    expect(matches(pattern, `${'a/'.repeat(300)}c`, true)).toBe(false);
    expect(matches(pattern, `${'a/'.repeat(300)}b`, true)).toBe(true);
    expect(matches(pattern, `${'a/'.repeat(99)}b`, true)).toBe(false);
    expect(matches(`${'*a'.repeat(200)}*b`, `${'xa'.repeat(200)}b`, false)).toBe(true);
  });

  it('a bracket expression full of `[:` without `:]` (git rescans it for each)', () => {
    const pattern = `[${'[:x'.repeat(100_000)}]`;
    expect(matches(pattern, ':', true)).toBe(true);
    expect(matches(pattern, 'y', true)).toBe(false);
    expect(matches(`[[:${'x'.repeat(100_000)}:]]`, 'x', true)).toBe(false);
  });

  it('a star every other byte, in a pattern longer than any path or as long as the path', () => {
    expect(matches(`${'*/'.repeat(500_000)}*`, 'a/b/c', true)).toBe(false);
    expect(matches(`${'*/'.repeat(1000)}*`, 'ab/'.repeat(1000), true)).toBe(true);
    expect(matches(`${'*/'.repeat(1000)}*`, 'ab/'.repeat(999), true)).toBe(false);
  });
});

// What the tokens mean, read straight from the rules and solved by brute force with a memo: `*`
// any bytes but `/`, `**` as a whole name any bytes (and `**/` no folder at all), `?` and `[...]`
// one byte but `/`. Git's early exits must never change a verdict.
function reference(pattern: string, text: string): boolean {
  const glob = compileGlob(bytes(pattern), true);
  const t = bytes(text);
  const memo = new Map<number, boolean>();
  const SLASH = 0x2f;
  const run = (k: number, i: number): boolean => {
    const key = k * 10_000 + i;
    const known = memo.get(key);
    if (known !== undefined) return known;
    const kind = glob.kinds[k];
    let result = false;
    if (kind === 5) result = i === t.length;
    else if (kind === 3) {
      const s = glob.values[k] as number;
      const flags = glob.starFlags[s] as number;
      const next = glob.starNext[s] as number;
      if (flags & 2 && run(next + 1, i)) result = true;
      for (let j = i; !result && j <= t.length; j += 1) {
        if (run(next, j)) result = true;
        if (!(flags & 1) && t[j] === SLASH) break;
      }
    } else if (kind !== 4 && i < t.length) {
      const c = t[i] as number;
      const inClass = (): boolean => {
        const word = glob.classes[((glob.values[k] as number) << 3) | (c >>> 5)] as number;
        return ((word >>> (c & 31)) & 1) === 1;
      };
      const one = kind === 0 ? c === glob.values[k] : c !== SLASH && (kind === 1 || inClass());
      result = one && run(k + 1, i + 1);
    }
    memo.set(key, result);
    return result;
  };
  return run(0, 0);
}

describe('random patterns', () => {
  function check(pattern: string, text: string): void {
    const glob = compileGlob(bytes(pattern), true);
    const t = bytes(text);
    const code = globResultCode(glob, t, 'auto');
    const context = JSON.stringify({ pattern, text });
    expect(globResultCode(glob, t, 'memo'), context).toBe(code);
    expect(globResultCode(glob, t, 'bottom-up'), context).toBe(code);
    expect(globMatches(glob, t, 0, t.length), context).toBe(code === 0);
    expect(reference(pattern, text), context).toBe(code === 0);
  }

  it('every way of solving gives git’s result code, and the verdict the rules give', () => {
    const PIECES = [
      'a',
      'b',
      '/',
      '/',
      '*',
      '*',
      '**',
      '?',
      '[ab]',
      '[!a]',
      '[[:alpha:]]',
      '\\*',
      '\\/',
      'é',
      '[',
      ']',
    ];
    const TEXT = ['a', 'b', '/', '/', '*', 'é', '[', ']', 'x'];
    const random = mulberry32(20240601);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
    for (let n = 0; n < 20_000; n += 1) {
      let pattern = '';
      for (let i = Math.floor(random() * 12); i > 0; i -= 1) pattern += pick(PIECES);
      let text = '';
      for (let i = Math.floor(random() * 16); i > 0; i -= 1) text += pick(TEXT);
      check(pattern, text);
    }
  });

  it('the same where git’s search runs long and the memo takes over', () => {
    const PIECES = ['a/**/', '**/', 'a', '*', '/', 'b', '*a*', '?', '**', 'a*/', '[ab]', '\\/'];
    const random = mulberry32(77);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
    for (let n = 0; n < 3_000; n += 1) {
      let pattern = '';
      for (let i = 2 + Math.floor(random() * 10); i > 0; i -= 1) pattern += pick(PIECES);
      check(pattern, `${'a/'.repeat(Math.floor(random() * 25))}${pick(['a', 'b', 'c', 'ab', 'a/b'])}`);
    }
  });
});
