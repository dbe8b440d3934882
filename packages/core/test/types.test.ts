import { describe, expect, it } from 'vitest';
import { DEFAULT_SCAN_OPTIONS } from '../src/types.js';

describe('defaults', () => {
  it('applies ignore files unless told otherwise', () => {
    expect(DEFAULT_SCAN_OPTIONS.syncIgnore).toBe(true);
  });
});
