// Every scan option comes from one row of the option table: what the API accepts in a body and
// in an upload query, the defaults it fills in, and the engine's spelling must agree for each row.
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_ENGINE_SCAN_OPTIONS,
  DEFAULT_WIRE_SCAN_OPTIONS,
  InspectRequest,
  PREVIEW_OPTION_NAMES,
  SCAN_OPTION_FLAGS,
  SCAN_OPTION_NAMES,
  SCAN_OPTIONS,
  ScanOptions,
  ScanRequest,
  SKIP_REASONS,
  SkippedEntry,
  toEngineOptions,
  toWireOptions,
  UploadQuery,
  withOutputDefaults,
} from '../src/index.js';
import type { ScanOptionName, WireScanOptions } from '../src/index.js';

/** A value other than the default for every option, valid for its row. */
function nonDefault(name: ScanOptionName): WireScanOptions[ScanOptionName] {
  const row = SCAN_OPTIONS[name];
  switch (row.kind) {
    case 'switch':
      return !row.default;
    case 'list':
      return ['src/**', '*.md'];
    case 'choice':
      return row.values.find((value) => value !== row.default) as WireScanOptions['secrets'];
    case 'count':
      return row.min + 1;
    case 'ref':
      return row.example;
  }
}

const changed = Object.fromEntries(SCAN_OPTION_NAMES.map((name) => [name, nonDefault(name)])) as WireScanOptions;

describe('the scan option table', () => {
  it('fills in the same defaults the API applies to an empty body', () => {
    expect(ScanOptions.parse({})).toEqual(DEFAULT_WIRE_SCAN_OPTIONS);
    expect(toWireOptions(DEFAULT_ENGINE_SCAN_OPTIONS)).toEqual(DEFAULT_WIRE_SCAN_OPTIONS);
    expect(DEFAULT_ENGINE_SCAN_OPTIONS.syncIgnore).toBe(true);
  });

  it('maps every option to the engine and back, keeping the wire key order of summary.json', () => {
    const engine = toEngineOptions(changed);
    expect(engine.docsOnly).toBe(true);
    expect(engine.sizeLimit).toBe(2);
    const back = toWireOptions(engine);
    expect(back).toEqual(changed);
    expect(JSON.stringify(back)).toBe(JSON.stringify(changed));
  });

  it('accepts each option in a JSON body and in an upload query with the same meaning', () => {
    expect(ScanRequest.parse({ repo_path: '/srv/repo', ...changed })).toEqual({ repo_path: '/srv/repo', ...changed });
    const query: Record<string, string | string[]> = {};
    for (const name of SCAN_OPTION_NAMES) {
      const value = changed[name];
      query[name] = Array.isArray(value) ? value.join(',') : String(value);
    }
    const { wait, ...fromQuery } = UploadQuery.parse(query);
    expect(wait).toBe(true);
    expect(fromQuery).toEqual(changed);
    expect(UploadQuery.parse({})).toEqual({ ...DEFAULT_WIRE_SCAN_OPTIONS, wait: true });
  });

  it('takes a choice only among its words, in the body and the query alike', () => {
    expect(DEFAULT_WIRE_SCAN_OPTIONS.secrets).toBe('redact');
    expect(ScanOptions.parse({ secrets: 'off' }).secrets).toBe('off');
    expect(ScanOptions.safeParse({ secrets: 'hide' }).success).toBe(false);
    expect(UploadQuery.parse({ secrets: 'report' }).secrets).toBe('report');
    expect(UploadQuery.safeParse({ secrets: 'yes' }).success).toBe(false);
    expect(InspectRequest.parse({ repo_path: '/srv/repo', secrets: 'off' }).secrets).toBe('off');
  });

  it('keeps the bounds of whole-number options in the body and the query alike', () => {
    for (const name of SCAN_OPTION_NAMES) {
      const row = SCAN_OPTIONS[name];
      if (row.kind !== 'count') continue;
      expect(ScanOptions.safeParse({ [name]: row.min - 1 }).success).toBe(false);
      expect(UploadQuery.safeParse({ [name]: String(row.min) }).success).toBe(true);
      if ('max' in row) {
        expect(ScanOptions.safeParse({ [name]: row.max + 1 }).success).toBe(false);
        expect(UploadQuery.safeParse({ [name]: String(row.max + 1) }).success).toBe(false);
      }
    }
  });

  it('lets a preview take the selection options and the part budget only; output options keep their defaults', () => {
    const preview = Object.fromEntries(PREVIEW_OPTION_NAMES.map((name) => [name, changed[name]]));
    const { repo_path: _repoPath, ...parsed } = InspectRequest.parse({ repo_path: '/srv/repo', ...preview });
    // The budget is an output option a preview takes too, to estimate the parts it would give.
    expect(parsed).toEqual({ ...preview, max_tokens_per_part: null });
    expect(InspectRequest.parse({ repo_path: '/srv/repo', max_tokens_per_part: 5000 }).max_tokens_per_part).toBe(5000);
    expect(InspectRequest.safeParse({ repo_path: '/srv/repo', max_tokens_per_part: 999 }).success).toBe(false);
    expect(InspectRequest.safeParse({ repo_path: '/srv/repo', lite: true }).success).toBe(false);
    expect(InspectRequest.safeParse({ repo_path: '/srv/repo', create_zip: true }).success).toBe(false);
    expect(withOutputDefaults(InspectRequest.parse({ repo_path: '/srv/repo', ...preview }))).toMatchObject({
      lite: false,
      create_zip: false,
      docs_only: true,
    });
  });

  it('gives every option its own command-line flag', () => {
    const flags = SCAN_OPTION_NAMES.map((name) => SCAN_OPTION_FLAGS[name].flag);
    expect(new Set(flags).size).toBe(SCAN_OPTION_NAMES.length);
    // A switch that is on by default is turned off by its flag, which must say so.
    for (const name of SCAN_OPTION_NAMES) {
      const row = SCAN_OPTIONS[name];
      if (row.kind === 'switch' && row.default) expect(SCAN_OPTION_FLAGS[name].flag).toMatch(/^--no-/);
    }
  });
});

describe('skip reasons', () => {
  it('accepts each reason and documents each one', () => {
    const description = (SkippedEntry.shape.reason.meta() as { description: string }).description;
    for (const reason of SKIP_REASONS) {
      expect(SkippedEntry.parse({ path: 'a', reason }).reason).toBe(reason);
      expect(description).toContain(`\`${reason}\``);
    }
    expect(SkippedEntry.safeParse({ path: 'a', reason: 'gone' }).success).toBe(false);
  });
});
