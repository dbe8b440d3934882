import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { get } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import type { Browser, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChangeFixture } from '../../../packages/sources/test/remote/helpers/change-fixture.js';
import { startGitHttpServer } from '../../../packages/sources/test/remote/helpers/git-http-server.js';
import { startTestApi } from './support/test-runtime.js';
import type { TestApi } from './support/test-runtime.js';
import { buildZip } from './support/zips.js';

// The page at `/`, driven in headless Chromium against a real API (embedded queue, real files).
// Every number the page shows is compared with what the API answers for the same request.

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'];
const RESULTS_DIR = fileURLToPath(new URL('../../../test-results/', import.meta.url));
const WAIT = { timeout: 45_000 };

interface InspectData {
  repository: { name: string; tree_summary: string };
  summary: {
    total_files: number;
    total_size: number;
    estimated_tokens: number;
    tokens_by_type: Record<string, number>;
  };
  files: { path: string }[];
}

interface ErrorEnvelope {
  status: 'error';
  code: string;
  detail: string;
}

let api: TestApi;
let browser: Browser;

/**
 * The preview the page should show, asked for by the test itself. The page previews as fields
 * change, from the same address, so its previews may hold this client's inspect slots for a
 * moment: wait as a client would when told INSPECT_BUSY.
 */
async function inspect(body: Record<string, unknown>): Promise<InspectData> {
  for (let attempt = 0; ; attempt++) {
    const response = await fetch(`${api.baseUrl}/v1/inspect`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const answer = (await response.json()) as { data: InspectData; code?: string };
    if (response.status === 429 && answer.code === 'INSPECT_BUSY' && attempt < 20) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      continue;
    }
    expect(response.status, JSON.stringify(answer)).toBe(200);
    return answer.data;
  }
}

/** A fresh page on the API's `/`, failing the test on any script error or CSP violation. */
async function openPage(width = 1280, height = 900): Promise<{ page: Page; problems: string[] }> {
  const page = await browser.newPage({ viewport: { width, height }, acceptDownloads: true });
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    // Chromium logs every 4xx it fetches; those are answers the page handles, not faults.
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
      problems.push(`console: ${message.text()}`);
  });
  await page.goto(`${api.baseUrl}/`);
  return { page, problems };
}

const attr = (page: Page, selector: string, name: string) => page.locator(selector).getAttribute(name);
const text = (page: Page, selector: string) => page.locator(selector).innerText();

/** Wait until the preview is drawn (not loading or stale) and shows `files` files. */
async function previewShows(page: Page, files: number): Promise<void> {
  await expect
    .poll(
      async () => [await attr(page, '#preview', 'data-state'), await attr(page, '#total-files', 'data-value')],
      WAIT,
    )
    .toEqual(['ready', String(files)]);
}

/** The preview on screen equals the inspect answer: totals, chart, tree and every table row. */
async function expectPreviewEquals(page: Page, expected: InspectData): Promise<void> {
  await previewShows(page, expected.summary.total_files);
  expect(await attr(page, '#total-size', 'data-value')).toBe(String(expected.summary.total_size));
  expect(await attr(page, '#total-tokens', 'data-value')).toBe(String(expected.summary.estimated_tokens));
  const bars: [string, number][] = [];
  for (const bar of await page.locator('#token-chart g[data-subcategory]').all()) {
    bars.push([String(await bar.getAttribute('data-subcategory')), Number(await bar.getAttribute('data-tokens'))]);
  }
  const expectedBars = Object.entries(expected.summary.tokens_by_type).filter(([, tokens]) => tokens > 0);
  expect(Object.fromEntries(bars)).toEqual(Object.fromEntries(expectedBars));
  expect(await page.locator('#tree').textContent()).toBe(expected.repository.tree_summary);
  const paths = await page.locator('#file-rows td.path').allTextContents();
  expect([...paths].sort()).toEqual(expected.files.map((f) => f.path).sort());
}

async function waitScanDone(page: Page, wait = WAIT): Promise<string> {
  await expect.poll(() => attr(page, '#scan-progress', 'value'), wait).toBe('100');
  await page.locator('#scan-result').waitFor({ state: 'visible', ...wait });
  const summaryHref = await attr(page, '#download-list a[data-format="summary"]', 'href');
  const scanId = /\/v1\/summary\/([0-9a-f-]{36})$/.exec(summaryHref ?? '')?.[1];
  if (!scanId) throw new Error(`no summary link on the page (href ${summaryHref})`);
  return scanId;
}

function statusOf(url: string, headers: Record<string, string>): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    get(url, { headers }, (response) => {
      response.resume();
      resolve(response.statusCode);
    }).on('error', reject);
  });
}

// Every error box the page ever shows, recorded from page load on: a flash that is gone again
// before the test looks is still caught.
const RECORD_ERRORS = `
  window.errorsShown = [];
  document.addEventListener('DOMContentLoaded', () => {
    for (const box of document.querySelectorAll('.error')) {
      new MutationObserver(() => { if (!box.hidden) window.errorsShown.push(box.id + ': ' + box.textContent); })
        .observe(box, { attributes: true, childList: true, subtree: true });
    }
  });`;

const errorsShown = (page: Page) => page.evaluate<string[]>('window.errorsShown');

// Every task that keeps the main thread busy over 50 ms, from page load on.
const RECORD_LONG_TASKS = `
  window.longTasks = [];
  new PerformanceObserver((list) => { for (const entry of list.getEntries()) window.longTasks.push(Math.round(entry.duration)); })
    .observe({ type: 'longtask' });`;

/** The digest's lines as the page draws them: split at \n, without the empty piece after the last one. */
function linesOf(digest: string): string[] {
  const lines = digest.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

const shownLines = (page: Page) => page.locator('#digest-lines .line').allTextContents();

async function firstShownLine(page: Page): Promise<number> {
  return Number(await page.locator('#digest-lines .line').first().getAttribute('data-line')) - 1;
}

async function summaryOf(
  base: string,
  scanId: string,
): Promise<{ summary: { total_files: number; total_size: number; estimated_tokens: number } }> {
  return (
    (await (await fetch(`${base}/v1/summary/${scanId}`)).json()) as {
      data: { summary: { total_files: number; total_size: number; estimated_tokens: number } };
    }
  ).data;
}

function noHorizontalOverflow(page: Page): Promise<number> {
  return page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
}

// A browser, a real API and several inspect round trips per test: a wider budget than the
// default, since the shared 2-core machine can make a single step take seconds.
describe('web page at / (headless Chromium)', { timeout: 120_000 }, () => {
  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(
        `Chromium is missing at ${CHROMIUM}: install it with \`apt-get install -y chromium\` (.ci/run installs it in CI).`,
      );
    }
    await mkdir(RESULTS_DIR, { recursive: true });
    [api, browser] = await Promise.all([
      startTestApi(),
      chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS }),
    ]);
  });
  afterAll(async () => {
    await browser?.close();
    await api?.close();
  });

  it('is served at / with a same-origin CSP, revalidated caching, and leaves the API routes alone', async () => {
    const page = await fetch(`${api.baseUrl}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toMatch(
      /default-src 'none'.*script-src 'self'.*connect-src 'self'/,
    );
    expect(page.headers.get('cache-control')).toBe('no-cache');
    const etag = page.headers.get('etag');
    expect(etag).toBeTruthy();
    // node:http, because fetch() marks a conditional request `Cache-Control: no-cache`, which disables 304.
    expect(await statusOf(`${api.baseUrl}/`, { 'if-none-match': etag ?? '' })).toBe(304);
    expect((await fetch(`${api.baseUrl}/app.js`)).headers.get('content-type')).toMatch(/javascript/);

    expect(await (await fetch(`${api.baseUrl}/health`)).json()).toMatchObject({ status: 'ok' });
    const docs = await fetch(`${api.baseUrl}/docs/`);
    expect(docs.status).toBe(200);
    expect(docs.headers.get('content-security-policy')).toBeNull();
    for (const [method, path] of [
      ['GET', '/v1/nope'],
      ['GET', '/no-such-file.html'],
      ['POST', '/'],
    ] as const) {
      const response = await fetch(`${api.baseUrl}${path}`, { method });
      expect(response.status, `${method} ${path}`).toBe(404);
      expect(await response.json()).toMatchObject({ status: 'error', code: 'ROUTE_NOT_FOUND' });
    }
  });

  it('previews a local path exactly as /v1/inspect answers, and follows a pattern change', async () => {
    const { page, problems } = await openPage();
    await page.getByLabel('Repository URL or server path').fill(api.repoDir);
    const all = await inspect({ repo_path: api.repoDir });
    await expectPreviewEquals(page, all);

    await page.getByLabel('Exclude patterns').fill('*.md');
    const withoutMarkdown = await inspect({ repo_path: api.repoDir, exclude_patterns: ['*.md'] });
    expect(withoutMarkdown.summary.total_files).toBeLessThan(all.summary.total_files);
    await expectPreviewEquals(page, withoutMarkdown);

    await page.getByLabel('Docs only').check();
    const docsOnly = await inspect({ repo_path: api.repoDir, exclude_patterns: ['*.md'], docs_only: true });
    await expectPreviewEquals(page, docsOnly);

    // The table sorts by a column on click, both ways.
    await page.getByLabel('Docs only').uncheck();
    await page.getByLabel('Exclude patterns').fill('');
    await expectPreviewEquals(page, all);
    await page.locator('th[data-key="tokens"] button').click();
    expect(await attr(page, 'th[data-key="tokens"]', 'aria-sort')).toBe('descending');
    const tokenCells = (await page.locator('#file-rows td:nth-child(4)').allTextContents()).map((t) =>
      Number(t.replace(/,/g, '')),
    );
    expect(tokenCells).toEqual([...tokenCells].sort((a, b) => b - a));
    await page.locator('th[data-key="tokens"] button').click();
    expect(await attr(page, 'th[data-key="tokens"]', 'aria-sort')).toBe('ascending');
    expect(problems).toEqual([]);
    await page.close();
  });

  it('waits for typing in the source to pause (1 s) before asking for a preview', async () => {
    const page = await browser.newPage();
    const inspects: Request[] = [];
    page.on('request', (request) => {
      if (request.url().endsWith('/v1/inspect')) inspects.push(request);
    });
    // The inspect is held until the page has been seen loading: a quick answer would otherwise
    // turn it ready before the check reads it.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route('**/v1/inspect', async (route) => {
      await held;
      await route.continue();
    });
    await page.clock.install();
    await page.goto(`${api.baseUrl}/`);
    await page.clock.pauseAt(Date.now() + 60_000);
    await page.getByLabel('Repository URL or server path').pressSequentially(api.repoDir);
    await page.clock.runFor(999);
    expect(await attr(page, '#preview', 'data-state')).not.toBe('loading');
    expect(inspects).toHaveLength(0);
    await page.clock.runFor(1);
    expect(await attr(page, '#preview', 'data-state')).toBe('loading');
    release();
    await page.clock.resume();
    await previewShows(page, (await inspect({ repo_path: api.repoDir })).summary.total_files);
    expect(inspects).toHaveLength(1);
    await page.close();
  });

  it('cancels the preview request in flight when the options change', async () => {
    const { page, problems } = await openPage();
    let releaseFirst!: () => void;
    const firstHeld = new Promise<void>((resolve) => (releaseFirst = resolve));
    let seen = 0;
    // Hold only the first inspect on its way to the (real) API; later ones pass straight through.
    await page.route('**/v1/inspect', async (route) => {
      if (++seen === 1) await firstHeld;
      await route.continue().catch(() => undefined);
    });
    const firstFailed = new Promise<string>((resolve) =>
      page.on('requestfailed', (request) => {
        if (request.url().endsWith('/v1/inspect')) resolve(request.failure()?.errorText ?? '');
      }),
    );
    const firstSent = page.waitForRequest('**/v1/inspect');
    await page.getByLabel('Repository URL or server path').fill(api.repoDir);
    await firstSent;
    await page.getByLabel('Exclude folders').fill('src');
    // Held, the first request can only end by being cancelled; the bound only names the failure.
    const notCancelled = new Promise<string>((resolve) =>
      setTimeout(() => resolve('the first inspect was never cancelled'), 30_000).unref(),
    );
    expect(await Promise.race([firstFailed, notCancelled])).toMatch(/ERR_ABORTED/);
    const expected = await inspect({ repo_path: api.repoDir, exclude_dirs: ['src'] });
    await expectPreviewEquals(page, expected);
    releaseFirst();
    expect(problems).toEqual([]);
    await page.close();
  });

  it('shows an API refusal as the API sentence and code, for the preview and for a scan', async () => {
    const { page, problems } = await openPage();
    const outside = '/etc';
    const refusal = (await (
      await fetch(`${api.baseUrl}/v1/inspect`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ repo_path: outside }),
      })
    ).json()) as ErrorEnvelope;
    expect(refusal.code).toBe('OUTSIDE_ALLOWED_ROOTS');

    const inspects: string[] = [];
    page.on('request', (request) => {
      if (request.url().endsWith('/v1/inspect')) inspects.push(request.url());
    });
    // Still in the field: a refusal is a quiet hint, since the path may be half typed.
    await page.getByLabel('Repository URL or server path').fill(outside);
    await expect.poll(() => attr(page, '#preview', 'data-state'), WAIT).toBe('hint');
    expect(await text(page, '#preview-status')).toBe(`No preview yet: ${refusal.detail}`);
    expect(await page.locator('#preview-error').isVisible()).toBe(false);
    // Leaving the field settles it: the same answer is now an error, without asking again.
    await page.getByLabel('Repository URL or server path').press('Tab');
    await expect.poll(() => attr(page, '#preview', 'data-state'), WAIT).toBe('error');
    expect(inspects).toHaveLength(1);
    expect(await text(page, '#preview-error .detail')).toBe(refusal.detail);
    expect(await text(page, '#preview-error .code')).toBe(refusal.code);

    await page.getByRole('button', { name: 'Scan' }).click();
    await page.locator('#scan-error').waitFor({ state: 'visible', ...WAIT });
    expect(await text(page, '#scan-error .detail')).toBe(refusal.detail);
    expect(await text(page, '#scan-error')).not.toMatch(/\bat .+:\d+/);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('typing a path key by key (300 ms a key) shows no error, spends no scan budget, and the Scan succeeds', async () => {
    // A scan budget of 2 a minute: if previews counted against it, the Scan would be refused.
    const strict = await startTestApi({ RATE_LIMIT_PER_MINUTE: '2', INSPECT_RATE_LIMIT_PER_MINUTE: '20' });
    const page = await browser.newPage();
    try {
      const statuses: number[] = [];
      const inspects: string[] = [];
      page.on('response', (response) => {
        statuses.push(response.status());
        if (response.url().endsWith('/v1/inspect'))
          inspects.push(`${response.status()} ${String(response.request().postDataJSON()?.repo_path)}`);
      });
      await page.addInitScript(RECORD_ERRORS);
      await page.goto(`${strict.baseUrl}/`);
      const field = page.getByLabel('Repository URL or server path');
      // Type most of the path, stop to think (a half path is previewed and refused), then finish it.
      const half = `${strict.localRoot}/sa`;
      expect(strict.repoDir.startsWith(half)).toBe(true);
      await field.pressSequentially(half, { delay: 300 });
      await expect.poll(() => attr(page, '#preview', 'data-state'), WAIT).toBe('hint');
      expect(await text(page, '#preview-status')).toMatch(/^No preview yet: /);
      await field.pressSequentially(strict.repoDir.slice(half.length), { delay: 300 });
      await page.getByRole('button', { name: 'Scan' }).click();
      const scanId = await waitScanDone(page);
      expect(await text(page, '#progress-text')).toMatch(/Completed/);
      expect(await errorsShown(page)).toEqual([]);
      expect(statuses).not.toContain(429);
      // The pause asked once, for the half path; leaving the field (the click) at most once more, for
      // the whole (the finished scan drops that preview if it is still on its way).
      const asked = inspects.map((line) => line.replace(strict.localRoot, '<root>'));
      expect(asked[0]).toBe('422 <root>/sa');
      expect(asked.slice(1)).toEqual(asked.length > 1 ? ['200 <root>/sample'] : []);
      expect((await summaryOf(strict.baseUrl, scanId)).summary.total_files).toBeGreaterThan(0);
    } finally {
      await page.close();
      await strict.close();
    }
  });

  it("after a scan the preview shows the scan's exact figures, not the estimate beside them", async () => {
    const { page, problems } = await openPage();
    await page.getByLabel('Repository URL or server path').fill(api.repoDir);
    const estimate = await inspect({ repo_path: api.repoDir });
    await previewShows(page, estimate.summary.total_files);
    expect(await text(page, '#tokens-label')).toBe('Tokens (estimate)');
    await page.getByRole('button', { name: 'Scan' }).click();
    const scanId = await waitScanDone(page);
    const exact = await summaryOf(api.baseUrl, scanId);
    // The sample's estimate and exact count differ, so the check below can tell them apart.
    expect(exact.summary.estimated_tokens).not.toBe(estimate.summary.estimated_tokens);
    await expect
      .poll(() => attr(page, '#total-tokens', 'data-value'), WAIT)
      .toBe(String(exact.summary.estimated_tokens));
    expect(await text(page, '#tokens-label')).toBe('Tokens (exact)');
    expect(await attr(page, '#total-files', 'data-value')).toBe(String(exact.summary.total_files));
    expect(await attr(page, '#total-size', 'data-value')).toBe(String(exact.summary.total_size));
    expect(await text(page, '#preview-status')).toMatch(/from the finished scan \(exact token counts\)/);
    expect(await text(page, '#result-text')).toContain(`${await text(page, '#total-tokens')} tokens (exact)`);
    // A changed option is a new question: the preview goes back to an estimate for it.
    await page.getByLabel('Docs only').check();
    await expect.poll(() => text(page, '#tokens-label'), WAIT).toBe('Tokens (estimate)');
    expect(problems).toEqual([]);
    await page.close();
  });

  it('at 360 px an error about old input goes as soon as the input is fixed', async () => {
    const { page, problems } = await openPage(360, 800);
    await page.getByLabel('Repository URL or server path').fill(api.repoDir);
    await page.getByLabel('Tree depth').fill('1.5');
    // The preview refuses the depth first; clicking once its error box is in place keeps the
    // narrow layout from moving the button between Playwright's aim and its click.
    await expect.poll(() => attr(page, '#preview', 'data-state'), WAIT).toBe('error');
    await page.getByRole('button', { name: 'Scan' }).click();
    await page.locator('#scan-error').waitFor({ state: 'visible', ...WAIT });
    expect(await text(page, '#scan-error .code')).toBe('INVALID_REQUEST');
    expect(await page.locator('#preview-error').isVisible()).toBe(true);

    await page.getByLabel('Tree depth').fill('1');
    // Gone at once, before any answer: neither box may speak about input that is no longer there.
    expect(await page.locator('#scan-error').isVisible()).toBe(false);
    expect(await page.locator('#preview-error').isVisible()).toBe(false);
    await previewShows(page, (await inspect({ repo_path: api.repoDir, tree_depth: 1 })).summary.total_files);
    expect(await page.locator('#scan-error').isVisible()).toBe(false);
    expect(await page.locator('#preview-error').isVisible()).toBe(false);
    expect(await noHorizontalOverflow(page)).toBeLessThanOrEqual(0);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('scans with every option on the form, shows progress to 100 %, and downloads the same Markdown as /v1/download', async () => {
    const { page, problems } = await openPage();
    const eventStreams: string[] = [];
    page.on('request', (request) => {
      if (request.url().endsWith('/events')) eventStreams.push(request.url());
    });
    let submitted: Record<string, unknown> = {};
    page.on('request', (request) => {
      if (request.url().includes('/v1/scan?')) submitted = request.postDataJSON() as Record<string, unknown>;
    });
    await page.getByLabel('Repository URL or server path').fill(api.repoDir);
    await page.getByLabel('Exclude patterns').fill('*.csv, *.yaml');
    await page.getByLabel('Tree depth').fill('3');
    await page.getByLabel('Skip files over (bytes)').fill('100000');
    await page.getByLabel('Also build the ZIP bundle').check();
    await page.getByLabel('Secrets').selectOption('report');
    await page.getByLabel('Code', { exact: true }).selectOption('signatures');
    await page.getByLabel('Remove comments').check();
    await previewShows(
      page,
      (
        await inspect({
          repo_path: api.repoDir,
          exclude_patterns: ['*.csv', '*.yaml'],
          tree_depth: 3,
          size_limit: 100000,
        })
      ).summary.total_files,
    );

    await page.getByRole('button', { name: 'Scan' }).click();
    const scanId = await waitScanDone(page);
    expect(submitted).toEqual({
      repo_path: api.repoDir,
      include_patterns: [],
      exclude_patterns: ['*.csv', '*.yaml'],
      exclude_dirs: [],
      docs_only: false,
      sync_ignore: true,
      skip_tree: false,
      tree_depth: 3,
      size_limit: 100000,
      secrets: 'report',
      compress: 'signatures',
      remove_comments: true,
      lite: false,
      create_zip: true,
      max_tokens_per_part: null,
      base_ref: null,
    });
    expect(eventStreams).toEqual([`${api.baseUrl}/v1/scans/${scanId}/events`]);
    expect(await text(page, '#progress-text')).toMatch(/Completed.*100 %/);

    const status = (await (await fetch(`${api.baseUrl}/v1/scans/${scanId}`)).json()) as {
      data: { result: { artifacts: Record<string, unknown> } };
    };
    const formats = await Promise.all(
      (await page.locator('#download-list a').all()).map((link) => link.getAttribute('data-format')),
    );
    expect(formats).toEqual([...Object.keys(status.data.result.artifacts), 'summary']);
    expect(formats).toContain('zip');

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.locator('#download-list a[data-format="md"]').click(),
    ]);
    const fromPage = await readFile(await download.path());
    const fromApi = Buffer.from(await (await fetch(`${api.baseUrl}/v1/download/${scanId}?format=md`)).arrayBuffer());
    expect(fromPage.length).toBeGreaterThan(0);
    expect(fromPage.equals(fromApi)).toBe(true);
    expect(download.suggestedFilename()).toBe('sample.md');

    await page.screenshot({ path: join(RESULTS_DIR, 'web-page.png'), fullPage: true });
    await page.setViewportSize({ width: 360, height: 800 });
    expect(await noHorizontalOverflow(page)).toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(RESULTS_DIR, 'web-page-360.png'), fullPage: true });
    expect(problems).toEqual([]);
    await page.close();
  });

  it('in parts: lists every part of every format with its tokens, and each link downloads that part', async () => {
    // Four files of about 600 tokens each: more than one part of 1 000 tokens in every format.
    const repo = join(api.localRoot, 'parted');
    await mkdir(repo, { recursive: true });
    for (const n of [1, 2, 3, 4])
      await writeFile(
        join(repo, `notes-${n}.md`),
        Array.from({ length: 60 }, (_, i) => `Line ${i} of note ${n}: reposcan cuts digests into parts.`).join('\n'),
      );
    const { page, problems } = await openPage();
    await page.getByLabel('Repository URL or server path').fill(repo);
    await page.getByLabel('Parts of at most (tokens)').fill('1000');
    await page.getByRole('button', { name: 'Scan' }).click();
    const scanId = await waitScanDone(page);
    const status = (await (await fetch(`${api.baseUrl}/v1/scans/${scanId}`)).json()) as {
      data: { result: { artifacts: Record<string, { parts?: Array<{ part: number; tokens: number; url: string }> }> } };
    };
    const txtParts = status.data.result.artifacts.txt?.parts ?? [];
    expect(txtParts.length).toBeGreaterThan(1);
    const links = page.locator('#download-list a[data-format="txt"]');
    expect(await links.count()).toBe(txtParts.length);
    for (const [i, part] of txtParts.entries()) {
      const link = links.nth(i);
      expect(await link.textContent()).toContain(`part ${part.part} of ${txtParts.length}`);
      expect(await link.textContent()).toContain(`${part.tokens.toLocaleString('en-US')} tokens`);
      const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
      const fromPage = await readFile(await download.path());
      const fromApi = Buffer.from(
        await (await fetch(`${api.baseUrl}/v1/download/${scanId}?format=txt&part=${part.part}`)).arrayBuffer(),
      );
      expect(fromPage.length).toBeGreaterThan(0);
      expect(fromPage.equals(fromApi)).toBe(true);
    }
    // The digest view shows part 1 of the Markdown.
    const part1 = linesOf(await (await fetch(`${api.baseUrl}/v1/download/${scanId}?format=md&part=1`)).text());
    await expect.poll(async () => (await shownLines(page))[0], WAIT).toBe(part1[0]);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('sends "Changes since" as base_ref for a URL, says what changed, and downloads only the changed files', async () => {
    // `acme/changes` on a loopback git server: tag v1, then two commits with a change of each kind.
    const fixture = createChangeFixture();
    const server = await startGitHttpServer(fixture.projectRoot);
    const gitApi = await startTestApi({
      GIT_ALLOW_HTTP: 'true',
      GIT_ALLOW_PRIVATE_HOSTS: 'true',
      GIT_ALLOWED_HOSTS: '127.0.0.1',
    });
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    const submitted: Record<string, unknown>[] = [];
    page.on('request', (request) => {
      if (request.url().includes('/v1/scan?')) submitted.push(request.postDataJSON() as Record<string, unknown>);
    });
    const repoUrl = `${server.origin}/acme/changes`;
    const apiGet = async <T>(path: string): Promise<T> =>
      ((await (await fetch(`${gitApi.baseUrl}${path}`)).json()) as { data: T }).data;
    try {
      await page.goto(`${gitApi.baseUrl}/`);
      await page.getByLabel('Repository URL or server path').fill(repoUrl);
      await page.getByLabel('Changes since').fill('v1');
      await page.getByRole('button', { name: 'Scan' }).click();
      const scanId = await waitScanDone(page);
      expect(submitted).toEqual([expect.objectContaining({ repo_path: repoUrl, base_ref: 'v1' })]);
      const { result } = await apiGet<{ result: { changes: unknown } }>(`/v1/scans/${scanId}`);
      expect(result.changes).toEqual({
        base_ref: 'v1',
        base_commit: fixture.base,
        head_commit: fixture.head,
        counts: { added: 2, modified: 2, renamed: 1, deleted: 2, binary: 1 },
      });
      expect(await text(page, '#result-changes')).toBe(
        `Changes since v1 (${fixture.base.slice(0, 7)}) → ${fixture.head.slice(0, 7)}: 2 added, 2 modified, 1 renamed, 2 deleted (1 binary).`,
      );
      const commits = page.locator('#result-changes code');
      expect(await commits.count()).toBe(2);
      expect([await commits.nth(0).getAttribute('title'), await commits.nth(1).getAttribute('title')]).toEqual([
        fixture.base,
        fixture.head,
      ]);
      await page.screenshot({ path: join(RESULTS_DIR, 'web-page-changes.png'), fullPage: true });
      await page.setViewportSize({ width: 360, height: 800 });
      expect(await noHorizontalOverflow(page)).toBeLessThanOrEqual(0);
      await page.setViewportSize({ width: 1280, height: 900 });

      // The text download holds the changed files (deleted ones with their diff) and nothing else.
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.locator('#download-list a[data-format="txt"]').click(),
      ]);
      const txt = await readFile(await download.path(), 'utf8');
      expect([...txt.matchAll(/^FILE: (.*)$/gm)].map((m) => m[1])).toEqual([
        'config/secrets.env',
        'docs/gone.md',
        'docs/new.md',
        'src/added.ts',
        'src/app.ts',
        'src/new-name.ts',
      ]);
      expect(txt).not.toContain('untouched.txt');
      expect(txt).not.toContain('never changes');
      expect(txt).not.toContain('The first version.');
      // The digest in the page is the change digest; the preview stays the whole repository's estimate.
      const md = linesOf(await (await fetch(`${gitApi.baseUrl}/v1/download/${scanId}?format=md`)).text());
      expect(md[0]).toBe('# changes: changes since `v1`');
      await expect.poll(async () => (await shownLines(page))[0], WAIT).toBe(md[0]);
      await expect.poll(() => attr(page, '#preview', 'data-state'), WAIT).toBe('ready');
      expect(await attr(page, '#total-files', 'data-value')).toBe('7');
      expect(await text(page, '#tokens-label')).toBe('Tokens (estimate)');

      // A ref the repository does not have: the scan fails, and the page says so in the API's words.
      await page.getByLabel('Changes since').fill('no-such-ref');
      const answer = page.waitForResponse((response) => response.url().includes('/v1/scan?'));
      await page.getByRole('button', { name: 'Scan' }).click();
      const accepted = ((await (await answer).json()) as { data: { scan_id: string } }).data;
      await page.locator('#scan-error').waitFor({ state: 'visible', ...WAIT });
      const failed = await apiGet<{ state: string; error: { code: string; message: string } }>(
        `/v1/scans/${accepted.scan_id}`,
      );
      expect(failed.state).toBe('failed');
      expect(failed.error.code).toBe('BASE_REF_NOT_FOUND');
      expect(failed.error.message).toContain("'no-such-ref'");
      expect(await text(page, '#scan-error .code')).toBe('BASE_REF_NOT_FOUND');
      expect(await text(page, '#scan-error .detail')).toBe(failed.error.message);
      expect(await page.locator('#scan-result').isVisible()).toBe(false);
      // Editing the ref clears the error about it.
      await page.getByLabel('Changes since').fill('v1');
      expect(await page.locator('#scan-error').isVisible()).toBe(false);

      // Refused at submit, each in the API's sentence: beside a token budget, and for a server path.
      const refusal = async (body: Record<string, unknown>): Promise<ErrorEnvelope> =>
        (await (
          await fetch(`${gitApi.baseUrl}/v1/scan?wait=false`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(body),
          })
        ).json()) as ErrorEnvelope;
      await page.getByLabel('Parts of at most (tokens)').fill('5000');
      await page.getByRole('button', { name: 'Scan' }).click();
      await page.locator('#scan-error').waitFor({ state: 'visible', ...WAIT });
      const parted = await refusal({ repo_path: repoUrl, base_ref: 'v1', max_tokens_per_part: 5000 });
      expect(parted.code).toBe('INVALID_REQUEST');
      expect(await text(page, '#scan-error .code')).toBe('INVALID_REQUEST');
      expect(await text(page, '#scan-error .detail')).toBe(parted.detail);
      expect(parted.detail).toContain('max_tokens_per_part');
      await page.getByLabel('Parts of at most (tokens)').fill('');
      expect(await page.locator('#scan-error').isVisible()).toBe(false);

      await page.getByLabel('Repository URL or server path').fill(gitApi.repoDir);
      await page.getByRole('button', { name: 'Scan' }).click();
      await page.locator('#scan-error').waitFor({ state: 'visible', ...WAIT });
      const local = await refusal({ repo_path: gitApi.repoDir, base_ref: 'v1' });
      expect(local.code).toBe('BASE_REF_NOT_SUPPORTED');
      expect(await text(page, '#scan-error .code')).toBe('BASE_REF_NOT_SUPPORTED');
      expect(await text(page, '#scan-error .detail')).toBe(local.detail);

      // An upload has no history: the field is not there for it.
      await page.getByLabel('Upload a ZIP').check();
      expect(await page.getByLabel('Changes since').isVisible()).toBe(false);
      expect(submitted.map((body) => body.base_ref)).toEqual(['v1', 'no-such-ref', 'v1', 'v1']);
      expect(problems).toEqual([]);
    } finally {
      await page.close();
      await gitApi.close();
      await server.close();
      fixture.cleanup();
    }
  });

  it('shows the digest in the page, copies it whole to the clipboard, and jumps from the file table to a file', async () => {
    const context = await browser.newContext({
      viewport: { width: 1280, height: 900 },
      permissions: ['clipboard-read', 'clipboard-write'],
    });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    try {
      await page.goto(`${api.baseUrl}/`);
      await page.getByLabel('Repository URL or server path').fill(api.repoDir);
      await page.getByRole('button', { name: 'Scan' }).click();
      const scanId = await waitScanDone(page);
      const md = await (await fetch(`${api.baseUrl}/v1/download/${scanId}?format=md`)).text();
      const lines = linesOf(md);
      await expect.poll(() => text(page, '#digest-status'), WAIT).toMatch(/^[\d,]+ lines/);
      expect(await text(page, '#digest-status')).toContain(`${lines.length.toLocaleString('en-US')} lines`);
      const first = await shownLines(page);
      expect(first.length).toBeGreaterThan(5);
      expect(first.length).toBeLessThan(lines.length);
      expect(first).toEqual(lines.slice(0, first.length));

      await page.getByRole('button', { name: 'Copy' }).click();
      await expect.poll(() => text(page, '#digest-status'), WAIT).toMatch(/^Copied the whole digest/);
      expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(md);

      // The last file's heading is far below the first screen: its link in the table brings it up.
      const heading = lines.findLastIndex((line) => line.startsWith('### `'));
      const path = /^### `(.*)`$/.exec(lines[heading] ?? '')?.[1] ?? '';
      expect(heading).toBeGreaterThan(first.length);
      await page.locator(`#file-rows a.jump[data-path="${path}"]`).click();
      await expect.poll(() => firstShownLine(page), WAIT).toBe(Math.min(heading, lines.length - first.length + 1));
      expect((await shownLines(page))[0]).toBe(lines[await firstShownLine(page)]);
      expect(await page.locator('#digest-lines .target').textContent()).toBe(lines[heading]);
      expect(await page.evaluate<string>('document.activeElement.id')).toBe('digest-view');
      // Keyboard: End shows the last line, Home the first, PageDown a screen further.
      await page.keyboard.press('End');
      await expect.poll(async () => (await shownLines(page)).at(-1), WAIT).toBe(lines.at(-1));
      await page.keyboard.press('Home');
      await expect.poll(() => firstShownLine(page), WAIT).toBe(0);
      await page.keyboard.press('PageDown');
      await expect.poll(() => firstShownLine(page), WAIT).toBeGreaterThan(5);
      expect(await shownLines(page)).toEqual(
        lines.slice(await firstShownLine(page), (await firstShownLine(page)) + (await shownLines(page)).length),
      );

      // The text digest, on request.
      await page.getByLabel('Text', { exact: true }).check();
      const txt = linesOf(await (await fetch(`${api.baseUrl}/v1/download/${scanId}?format=txt`)).text());
      await expect.poll(async () => (await shownLines(page))[0], WAIT).toBe(txt[0]);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it(
    'draws a digest of tens of MB a screen at a time, and no task blocks the page for 500 ms',
    { timeout: 600_000 },
    async () => {
      // 24 files of 1 MiB, about 300 000 lines: a digest of some 25 MB.
      const bigDir = join(api.localRoot, 'big');
      await mkdir(bigDir, { recursive: true });
      for (let f = 0; f < 24; f++) {
        const rows: string[] = [];
        for (let i = 0, size = 0; size < 1024 ** 2; i++) {
          const row = `export const value${i} = 'row ${i} of file ${f}: the quick brown fox jumps over the lazy dog';\n`;
          rows.push(row);
          size += row.length;
        }
        await writeFile(join(bigDir, `file-${String(f).padStart(2, '0')}.js`), rows.join(''));
      }
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      const problems: string[] = [];
      page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
      try {
        await page.addInitScript(RECORD_LONG_TASKS);
        await page.goto(`${api.baseUrl}/`);
        // The probe must see a task that does block, or the bound below would hold for nothing.
        // (In a task of the page's own: code run by page.evaluate is not a task the probe sees.)
        await page.evaluate(
          'setTimeout(() => { const end = performance.now() + 700; while (performance.now() < end); }, 0)',
        );
        await expect
          .poll(async () => Math.max(0, ...(await page.evaluate<number[]>('window.longTasks'))), WAIT)
          .toBeGreaterThanOrEqual(650);
        await page.getByLabel('Repository URL or server path').fill(bigDir);
        await page.getByRole('button', { name: 'Scan' }).click();
        const scanId = await waitScanDone(page, { timeout: 400_000 });
        const md = await (await fetch(`${api.baseUrl}/v1/download/${scanId}?format=md`)).text();
        expect(Buffer.byteLength(md)).toBeGreaterThan(20 * 1024 ** 2);
        const lines = linesOf(md);

        // Too large to load unasked; measured from the click on.
        await page.locator('#digest-show').waitFor({ state: 'visible', ...WAIT });
        await page.evaluate('window.longTasks.length = 0');
        await page.getByRole('button', { name: 'Show in the page' }).click();
        await expect.poll(() => text(page, '#digest-status'), { timeout: 300_000 }).toMatch(/^[\d,]+ lines/);
        expect(await text(page, '#digest-status')).toContain(`${lines.length.toLocaleString('en-US')} lines`);
        // Only the lines in view are in the page.
        const drawn = await page.locator('#digest-lines .line').count();
        expect(drawn).toBeGreaterThan(10);
        expect(drawn).toBeLessThan(100);

        // A file in the middle, by its link: its heading and the lines after it, as downloaded.
        const heading = lines.indexOf('### `file-12.js`');
        expect(heading).toBeGreaterThan(lines.length / 3);
        await page.locator('#file-rows a.jump[data-path="file-12.js"]').click();
        await expect.poll(() => firstShownLine(page), WAIT).toBe(heading);
        expect(await shownLines(page)).toEqual(lines.slice(heading, heading + drawn));
        await page.keyboard.press('End');
        await expect.poll(async () => (await shownLines(page)).at(-1), WAIT).toBe(lines.at(-1));
        await page.locator('#digest-view').evaluate('(view) => { view.scrollTop = view.scrollHeight / 2; }');
        await expect.poll(() => firstShownLine(page), WAIT).toBeGreaterThan(lines.length / 3);

        // A responsiveness bound, not a speed target: loading, indexing and drawing yield to the browser.
        const longTasks = await page.evaluate<number[]>('window.longTasks');
        expect(Math.max(0, ...longTasks)).toBeLessThan(500);
        expect(problems).toEqual([]);
      } finally {
        await page.close();
      }
    },
  );

  it('works unchanged when CORS_ORIGINS allows only other origins (it calls its own origin)', async () => {
    const strict = await startTestApi({ CORS_ORIGINS: 'https://elsewhere.example' });
    const page = await browser.newPage();
    try {
      await page.goto(`${strict.baseUrl}/`);
      await page.getByLabel('Repository URL or server path').fill(strict.repoDir);
      const expected = (await (
        await fetch(`${strict.baseUrl}/v1/inspect`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ repo_path: strict.repoDir }),
        })
      ).json()) as { data: InspectData };
      await previewShows(page, expected.data.summary.total_files);
      await page.getByRole('button', { name: 'Scan' }).click();
      await waitScanDone(page);
    } finally {
      await page.close();
      await strict.close();
    }
  });

  it('with API keys on: refuses until a key is entered, then previews, scans, follows, shows and downloads with it', async () => {
    const key = 'page-key-0123456789abcdef';
    const keyed = await startTestApi({ API_KEYS: `web:${key}` });
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    /** Every API request of the page, with whether it carried the key. */
    const calls: { path: string; keyed: boolean }[] = [];
    page.on('request', (request: Request) => {
      const path = new URL(request.url()).pathname;
      if (path.startsWith('/v1/')) calls.push({ path, keyed: request.headers().authorization === `Bearer ${key}` });
    });
    try {
      await page.goto(`${keyed.baseUrl}/`);
      await page.getByLabel('Repository URL or server path').fill(keyed.repoDir);
      await page.getByLabel('Repository URL or server path').press('Tab');
      await expect.poll(() => text(page, '#preview-error'), WAIT).toContain('API_KEY_MISSING');
      expect(await text(page, '#preview-error')).toContain('Authorization: Bearer');

      await page.getByLabel(/API key/).fill(key);
      const expected = (await (
        await fetch(`${keyed.baseUrl}/v1/inspect`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
          body: JSON.stringify({ repo_path: keyed.repoDir }),
        })
      ).json()) as { data: InspectData };
      await previewShows(page, expected.data.summary.total_files);

      await page.getByRole('button', { name: 'Scan' }).click();
      const scanId = await waitScanDone(page);
      expect(await text(page, '#progress-text')).toMatch(/Completed.*100 %/);
      // The digest is read from the download route with the key too.
      await expect.poll(() => page.locator('#digest-lines .line').count(), WAIT).toBeGreaterThan(0);

      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.locator('#download-list a[data-format="md"]').click(),
      ]);
      const fromApi = Buffer.from(
        await (
          await fetch(`${keyed.baseUrl}/v1/download/${scanId}?format=md`, {
            headers: { authorization: `Bearer ${key}` },
          })
        ).arrayBuffer(),
      );
      expect((await readFile(await download.path())).equals(fromApi)).toBe(true);
      expect(download.suggestedFilename()).toBe('sample.md');

      const keyedCalls = calls.filter((c) => c.keyed).map((c) => c.path);
      expect(keyedCalls).toContain('/v1/inspect');
      expect(keyedCalls).toContain('/v1/scan');
      expect(keyedCalls).toContain(`/v1/scans/${scanId}/events`);
      expect(keyedCalls).toContain(`/v1/download/${scanId}`);
      // Only the first preview, before the key was typed, went without it.
      expect(calls.filter((c) => !c.keyed).map((c) => c.path)).toEqual(['/v1/inspect']);

      // Kept for this tab across a reload, and in no other tab.
      await page.reload();
      expect(await page.getByLabel(/API key/).inputValue()).toBe(key);
      const other = await browser.newPage();
      await other.goto(`${keyed.baseUrl}/`);
      expect(await other.getByLabel(/API key/).inputValue()).toBe('');
      await other.close();
      expect(problems).toEqual([]);
    } finally {
      await page.close();
      await keyed.close();
    }
  });

  it('uploads a ZIP, follows its scan, then previews it from the scan summary', async () => {
    const { page, problems } = await openPage(360, 800);
    const zipPath = join(api.dataDir, '..', 'page-upload.zip');
    await buildZip(zipPath, {
      'demo-main/README.md': '# Demo\n\nA small upload.\n',
      'demo-main/src/app.py': 'print("hi")\n',
      'demo-main/src/app_test.py': 'assert True\n',
      'demo-main/config.json': '{"a": 1}\n',
      // A non-textual file: the summary lists it under `assets`, inspect would list it in `files`.
      'demo-main/logo.png': Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex'),
    });
    await page.getByLabel('Upload a ZIP').check();
    await expect.poll(() => page.locator('#zip-hint').isVisible()).toBe(true);
    expect(await page.getByLabel('Branch or tag').isVisible()).toBe(false);
    await page.getByLabel('ZIP archive').setInputFiles(zipPath);
    await page.getByLabel('Exclude patterns').fill('*_test.py');
    await page.getByLabel('Tree depth').fill('1');
    await page.getByRole('button', { name: 'Scan' }).click();
    const scanId = await waitScanDone(page);

    const summary = (
      (await (await fetch(`${api.baseUrl}/v1/summary/${scanId}`)).json()) as {
        data: {
          repository: { name: string };
          summary: { total_files: number; total_size: number; estimated_tokens: number };
          files: { path: string }[];
          assets: { path: string }[];
        };
      }
    ).data;
    expect(summary.repository.name).toBe('demo-main');
    await previewShows(page, summary.summary.total_files);
    expect(await attr(page, '#total-tokens', 'data-value')).toBe(String(summary.summary.estimated_tokens));
    expect(await attr(page, '#total-size', 'data-value')).toBe(String(summary.summary.total_size));
    const paths = await page.locator('#file-rows td.path').allTextContents();
    expect([...paths].sort()).toEqual([...summary.files, ...summary.assets].map((f) => f.path).sort());
    expect(paths).not.toContain('src/app_test.py');
    expect(summary.assets.map((a) => a.path)).toEqual(['logo.png']);
    // The page draws the tree itself here (the summary has none): it must be the artifacts' tree.
    const tree = await page.locator('#tree').textContent();
    expect(tree).toBe('demo-main/\n├── src/\n│   └── ...\n├── config.json\n├── logo.png\n└── README.md');
    const txt = await (await fetch(`${api.baseUrl}/v1/download/${scanId}?format=txt`)).text();
    expect(txt).toContain(`Directory structure:\n${tree}\n`);
    expect(await noHorizontalOverflow(page)).toBeLessThanOrEqual(0);
    expect(problems).toEqual([]);
    await page.close();
  });
});
