// The API's kept summaries: bounded by their length, the least recently read going first.
import { describe, expect, it } from 'vitest';
import { SummaryCache } from '../src/services/summary-cache.js';

const summary = (chars: number, folder = 'f') => ({ folder, json: 'x'.repeat(chars) });

describe('SummaryCache', () => {
  it('keeps summaries up to its length in characters, dropping the least recently read first', () => {
    const cache = new SummaryCache(100);
    cache.set('a', summary(40));
    cache.set('b', summary(40));
    expect(cache.get('a')?.json.length).toBe(40); // a is now the most recently read
    cache.set('c', summary(40)); // 120 > 100: b goes
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBeDefined();
    expect(cache.get('c')).toBeDefined();
    expect(cache.size).toBe(80);
  });

  it('serves but does not keep a summary longer than the bound, and replaces a scan kept before', () => {
    const cache = new SummaryCache(100);
    cache.set('a', summary(30, 'old'));
    cache.set('a', summary(50, 'new'));
    expect(cache.get('a')?.folder).toBe('new');
    expect(cache.size).toBe(50);
    cache.set('huge', summary(101));
    expect(cache.get('huge')).toBeUndefined();
    expect(cache.get('a')).toBeDefined();
    cache.delete('a');
    expect(cache.size).toBe(0);
  });
});
