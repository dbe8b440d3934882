// @ts-check
// The reposcan page: a live preview from POST /v1/inspect, a scan with progress from the scan's
// server-sent events, then the artifacts to download. Plain DOM, same origin, no dependencies;
// type-checked by `tsc -p apps/api/public` (checkJs) as part of `npm test`. Sizes, token counts,
// names and trees are formatted by the engine's own code (core-format.js, generated from it), so
// the page shows them exactly as the artifacts do.
import { changeCountsLine, compareNames, displayPath, formatSize, formatTokens, renderTree } from './core-format.js';

// A huge repository would make a table of every file slow to draw; the totals still count all.
const MAX_TABLE_ROWS = 1000;
const TERMINAL_STATES = new Set(['completed', 'failed', 'cancelled']);

/**
 * @typedef {{ detail: string, code: string }} Problem
 * @typedef {{ path: string, subcategory: string, size: number, tokens: number }} FileRow
 * @typedef {{ files: number, size: number, tokens: number, formattedSize: string, formattedTokens: string, tokensByType: Record<string, number> }} Totals
 * @typedef {{ mode: string, count: number }} Secrets
 * @typedef {{ files: number, tokens_before: number, tokens_after: number, not_compressed: unknown[] }} Compression
 * @typedef {{ name: string, branch: string | null, totals: Totals, files: FileRow[], tree: string, exact: boolean, secrets: Secrets | null,
 *   compression: Compression | null }} Preview
 * @typedef {{ scan_id: string, state: string, status_url: string, events_url: string }} Accepted
 * @typedef {{ part: number, url: string, bytes: number, sha256: string, tokens: number }} ArtifactPart
 * @typedef {{ url: string, bytes: number, sha256: string, parts?: ArtifactPart[] }} Artifact
 * @typedef {{ base_ref: string, base_commit: string, head_commit: string | null,
 *   counts: { added: number, modified: number, renamed: number, deleted: number, binary: number } }} Changes
 * @typedef {{ scan_id: string, repo_name: string, branch: string | null, num_textual_files: number, num_non_textual_files: number,
 *   summary: { total_files: number, formatted: { total_size: string, estimated_tokens: string } }, artifacts: Record<string, Artifact>,
 *   secrets?: Secrets, compression?: Compression, changes?: Changes }} ScanResult
 * @typedef {{ scan_id: string, state: string, progress: { phase: string, files_done: number, files_total: number },
 *   error: { code: string, message: string } | null, result: ScanResult | null, status_url: string, events_url: string }} ScanStatus
 * @typedef {{ total_files: number, total_size: number, estimated_tokens: number, tokens_by_type: Record<string, number>,
 *   formatted: { total_size: string, estimated_tokens: string } }} ApiTotals
 * @typedef {{ path: string, subcategory: string, size_bytes: number, tokens_estimate?: number }} ApiFile
 */

/**
 * @template {HTMLElement} T
 * @param {string} id
 * @param {{ new (): T }} type
 * @returns {T}
 */
function byId(id, type) {
  const element = document.getElementById(id);
  if (!(element instanceof type)) throw new Error(`The page is missing #${id}.`);
  return element;
}

const ui = {
  form: byId('scan-form', HTMLFormElement),
  modePath: byId('mode-path', HTMLInputElement),
  modeZip: byId('mode-zip', HTMLInputElement),
  pathSource: byId('path-source', HTMLDivElement),
  zipSource: byId('zip-source', HTMLDivElement),
  repoPath: byId('repo-path', HTMLInputElement),
  zipFile: byId('zip-file', HTMLInputElement),
  branchField: byId('branch-field', HTMLDivElement),
  branch: byId('branch', HTMLInputElement),
  baseRefField: byId('base-ref-field', HTMLDivElement),
  baseRef: byId('base-ref', HTMLInputElement),
  apiKey: byId('api-key', HTMLInputElement),
  includePatterns: byId('include-patterns', HTMLTextAreaElement),
  excludePatterns: byId('exclude-patterns', HTMLTextAreaElement),
  excludeDirs: byId('exclude-dirs', HTMLTextAreaElement),
  docsOnly: byId('docs-only', HTMLInputElement),
  syncIgnore: byId('sync-ignore', HTMLInputElement),
  skipTree: byId('skip-tree', HTMLInputElement),
  treeDepth: byId('tree-depth', HTMLInputElement),
  sizeLimit: byId('size-limit', HTMLInputElement),
  secrets: byId('secrets', HTMLSelectElement),
  compress: byId('compress', HTMLSelectElement),
  removeComments: byId('remove-comments', HTMLInputElement),
  maxTokens: byId('max-tokens', HTMLInputElement),
  lite: byId('lite', HTMLInputElement),
  createZip: byId('create-zip', HTMLInputElement),
  scanButton: byId('scan-button', HTMLButtonElement),
  progress: byId('scan-progress', HTMLProgressElement),
  progressText: byId('progress-text', HTMLSpanElement),
  scanError: byId('scan-error', HTMLDivElement),
  scanResult: byId('scan-result', HTMLDivElement),
  resultText: byId('result-text', HTMLParagraphElement),
  resultChanges: byId('result-changes', HTMLParagraphElement),
  downloads: byId('download-list', HTMLUListElement),
  preview: byId('preview', HTMLElement),
  previewStatus: byId('preview-status', HTMLSpanElement),
  previewError: byId('preview-error', HTMLDivElement),
  previewBody: byId('preview-body', HTMLDivElement),
  totalFiles: byId('total-files', HTMLElement),
  totalSize: byId('total-size', HTMLElement),
  totalTokens: byId('total-tokens', HTMLElement),
  tokensLabel: byId('tokens-label', HTMLElement),
  chart: byId('token-chart', HTMLDivElement),
  tree: byId('tree', HTMLPreElement),
  table: byId('file-table', HTMLTableElement),
  rows: byId('file-rows', HTMLTableSectionElement),
  tableNote: byId('table-note', HTMLParagraphElement),
  digest: byId('digest', HTMLElement),
  digestMd: byId('digest-md', HTMLInputElement),
  digestTxt: byId('digest-txt', HTMLInputElement),
  digestShow: byId('digest-show', HTMLButtonElement),
  digestCopy: byId('digest-copy', HTMLButtonElement),
  digestStatus: byId('digest-status', HTMLParagraphElement),
  digestError: byId('digest-error', HTMLDivElement),
  digestView: byId('digest-view', HTMLDivElement),
  digestLines: byId('digest-lines', HTMLDivElement),
  digestSpacer: byId('digest-spacer', HTMLDivElement),
};

// ---------------------------------------------------------------------------------------------
// Talking to the API: every failure becomes a Problem with the API's own sentence.

class ApiProblem extends Error {
  /** @param {string} detail @param {string} code @param {number} [status] HTTP status; 0 when there was no answer @param {number} [retryAfter] seconds */
  constructor(detail, code, status = 0, retryAfter = 0) {
    super(detail);
    this.detail = detail;
    this.code = code;
    this.status = status;
    this.retryAfter = retryAfter;
  }
}

// The API key, when the server has keys: typed once, kept for this tab only (sessionStorage
// forgets it when the tab closes), and sent as `Authorization: Bearer` on every call, event
// streams and downloads included. Neither an <a href> download nor EventSource can send a
// header, so both go through fetch.
const API_KEY_STORAGE = 'reposcan.apiKey';

/** @returns {Record<string, string>} */
function authHeaders() {
  const key = ui.apiKey.value.trim();
  return key === '' ? {} : { authorization: `Bearer ${key}` };
}

/**
 * fetch with the API key, if one is set.
 * @param {string} url @param {RequestInit} [init]
 */
function apiFetch(url, init = {}) {
  return fetch(url, {
    ...init,
    headers: { ...authHeaders(), .../** @type {Record<string, string>} */ (init.headers) },
  });
}

/**
 * Call the API and return the envelope's `data`; throw an ApiProblem carrying the error
 * envelope's `detail` and `code`, or a plain sentence when the answer is not an envelope.
 * @param {string} url
 * @param {RequestInit} [init]
 * @returns {Promise<any>}
 */
async function callApi(url, init = {}) {
  /** @type {Response} */
  let response;
  try {
    response = await apiFetch(url, {
      ...init,
      headers: { accept: 'application/json', .../** @type {Record<string, string>} */ (init.headers) },
    });
  } catch {
    throw new ApiProblem('Could not reach the API. Check that the server is running, then try again.', 'NETWORK_ERROR');
  }
  /** @type {any} */
  const body = await response.json().catch(() => null);
  if (response.ok && body && body.status === 'success') return body.data;
  const retryAfter = Number(response.headers.get('retry-after')) || 0;
  if (body && body.status === 'error' && typeof body.detail === 'string') {
    throw new ApiProblem(body.detail, typeof body.code === 'string' ? body.code : '', response.status, retryAfter);
  }
  throw new ApiProblem(
    `The server answered HTTP ${response.status} without an explanation.`,
    `HTTP_${response.status}`,
    response.status,
    retryAfter,
  );
}

/** @param {unknown} error @returns {Problem} */
function toProblem(error) {
  if (error instanceof ApiProblem) return { detail: error.detail, code: error.code };
  // A bug in this page: say so in a sentence; the details belong in the console, not on screen.
  console.error(error);
  return { detail: 'Something went wrong in this page. Reload it and try again.', code: 'PAGE_ERROR' };
}

/** @param {HTMLElement} box @param {Problem | null} problem */
function showProblem(box, problem) {
  box.replaceChildren();
  box.hidden = problem === null;
  if (!problem) return;
  const sentence = document.createElement('span');
  sentence.className = 'detail';
  sentence.textContent = problem.detail;
  box.append(sentence);
  if (problem.code) {
    const code = document.createElement('small');
    code.className = 'code';
    code.textContent = problem.code;
    box.append(' ', code);
  }
}

// ---------------------------------------------------------------------------------------------
// Options, read from the form exactly as the API names them.

/** @param {string} text */
function splitList(text) {
  return text
    .split(/[,\n]/)
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
}

/**
 * An empty number field is "not set" (null); a number is sent as typed for the API to judge
 * (so 1.5 or -1 come back as the API's sentence). Text the browser cannot read as a number
 * counts as not set, and the field is marked invalid by the browser.
 * @param {HTMLInputElement} input
 */
function readNumber(input) {
  const text = input.value.trim();
  return text === '' ? null : Number(text);
}

function mode() {
  return ui.modeZip.checked ? 'zip' : 'path';
}

/** The options that select files: what /v1/inspect takes besides the source. */
function selectionOptions() {
  return {
    include_patterns: splitList(ui.includePatterns.value),
    exclude_patterns: splitList(ui.excludePatterns.value),
    exclude_dirs: splitList(ui.excludeDirs.value),
    docs_only: ui.docsOnly.checked,
    sync_ignore: ui.syncIgnore.checked,
    skip_tree: ui.skipTree.checked,
    tree_depth: readNumber(ui.treeDepth),
    size_limit: readNumber(ui.sizeLimit),
    secrets: ui.secrets.value,
    compress: ui.compress.value,
    remove_comments: ui.removeComments.checked,
  };
}

function scanOptions() {
  return {
    ...selectionOptions(),
    lite: ui.lite.checked,
    create_zip: ui.createZip.checked,
    max_tokens_per_part: readNumber(ui.maxTokens),
  };
}

function sourceFields() {
  const branch = ui.branch.value.trim();
  return { repo_path: ui.repoPath.value.trim(), ...(branch ? { branch } : {}) };
}

/**
 * `base_ref` for a scan by URL or path, sent as typed: with a server path or beside
 * max_tokens_per_part the API refuses it, and its sentence says why, as for any other option.
 */
function changeDigestOption() {
  return { base_ref: ui.baseRef.value.trim() || null };
}

/** Upload options travel as query parameters: booleans as true/false, lists comma-separated. */
function uploadQuery() {
  const query = new URLSearchParams({ wait: 'false' });
  for (const [key, value] of Object.entries(scanOptions())) {
    if (value === null) continue;
    if (Array.isArray(value)) {
      if (value.length > 0) query.set(key, value.join(','));
    } else {
      query.set(key, String(value));
    }
  }
  return query.toString();
}

// ---------------------------------------------------------------------------------------------
// The preview model, from an inspect answer or from a finished scan's summary record.

/** @param {ApiTotals} summary @returns {Totals} */
function toTotals(summary) {
  return {
    files: summary.total_files,
    size: summary.total_size,
    tokens: summary.estimated_tokens,
    formattedSize: summary.formatted.total_size,
    formattedTokens: summary.formatted.estimated_tokens,
    tokensByType: summary.tokens_by_type,
  };
}

/** @param {ApiFile} file @returns {FileRow} */
function toRow(file) {
  return { path: file.path, subcategory: file.subcategory, size: file.size_bytes, tokens: file.tokens_estimate ?? 0 };
}

/**
 * @param {{ repository: { name: string, branch: string | null, tree_summary: string }, summary: ApiTotals, files: ApiFile[], secrets?: Secrets,
 *   compression?: Compression }} data
 * @returns {Preview}
 */
function previewFromInspect(data) {
  return {
    name: data.repository.name,
    branch: data.repository.branch,
    totals: toTotals(data.summary),
    files: data.files.map(toRow),
    tree: data.repository.tree_summary,
    exact: false,
    secrets: data.secrets ?? null,
    compression: data.compression ?? null,
  };
}

/** ` Code transformed: 12,000 → 3,000 tokens in 40 files.`, or nothing without compressed code. @param {Compression | null | undefined} compression */
function compressionNote(compression) {
  if (!compression || compression.files === 0) return '';
  const kept = compression.not_compressed.length;
  return ` Code transformed: ${compression.tokens_before.toLocaleString('en-US')} → ${compression.tokens_after.toLocaleString('en-US')} tokens in ${compression.files.toLocaleString('en-US')} file${compression.files === 1 ? '' : 's'}${kept > 0 ? ` (${kept} kept as they are: see the summary's \`compression\`)` : ''}.`;
}

/** `, 2 possible secrets (redacted)`, or nothing when detection is off or found none. @param {Secrets | null | undefined} secrets */
function secretsNote(secrets) {
  if (!secrets || secrets.count === 0) return '';
  const what = secrets.mode === 'redact' ? 'redacted in the outputs' : 'left in the outputs';
  return ` ${secrets.count} possible secret${secrets.count === 1 ? '' : 's'}, ${what}: see the summary's \`secrets\`.`;
}

/**
 * An uploaded ZIP has no inspect: its preview is the finished scan's summary record, whose
 * `files` (textual) and `assets` (non-textual) together are what inspect's `files` would list.
 * @param {{ repository: { name: string, branch: string | null }, options: { tree_depth: number | null },
 *   summary: ApiTotals, files: ApiFile[], assets: ApiFile[], secrets?: Secrets, compression?: Compression }} data
 * @returns {Preview}
 */
function previewFromSummary(data) {
  const files = [...data.files, ...data.assets].map(toRow);
  return {
    name: data.repository.name,
    branch: data.repository.branch,
    totals: toTotals(data.summary),
    files,
    // As inspect does: the tree follows tree_depth and is drawn even when the outputs skip it.
    tree: renderTree(
      data.repository.name,
      files.map((f) => f.path),
      data.options.tree_depth,
    ),
    exact: true,
    secrets: data.secrets ?? null,
    compression: data.compression ?? null,
  };
}

// ---------------------------------------------------------------------------------------------
// Drawing the preview: totals, chart, tree and the sortable table.

/** @type {Preview | null} */
let shown = null;
/** @type {{ key: 'path' | 'subcategory' | 'size' | 'tokens', descending: boolean }} */
const sort = { key: 'path', descending: false };

/**
 * @param {'empty' | 'stale' | 'loading' | 'ready' | 'error' | 'hint'} state
 * @param {string} message
 */
function setPreviewState(state, message) {
  ui.preview.dataset.state = state;
  ui.preview.setAttribute('aria-busy', String(state === 'loading'));
  ui.previewStatus.textContent = message;
}

/** @param {Preview} preview */
function renderPreview(preview) {
  shown = preview;
  showProblem(ui.previewError, null);
  ui.previewBody.hidden = false;
  const { totals } = preview;
  ui.totalFiles.textContent = totals.files.toLocaleString('en-US');
  ui.totalFiles.dataset.value = String(totals.files);
  ui.totalSize.textContent = totals.formattedSize;
  ui.totalSize.dataset.value = String(totals.size);
  ui.totalSize.title = `${totals.size.toLocaleString('en-US')} bytes`;
  ui.totalTokens.textContent = totals.formattedTokens;
  ui.totalTokens.dataset.value = String(totals.tokens);
  ui.totalTokens.title = `${totals.tokens.toLocaleString('en-US')} tokens`;
  ui.tokensLabel.textContent = preview.exact ? 'Tokens (exact)' : 'Tokens (estimate)';
  drawChart(totals.tokensByType, totals.tokens);
  ui.tree.textContent = preview.tree;
  renderRows();
}

function clearPreview() {
  shown = null;
  ui.previewBody.hidden = true;
  showProblem(ui.previewError, null);
}

function renderRows() {
  if (!shown) return;
  const { key, descending } = sort;
  const direction = descending ? -1 : 1;
  const rows = [...shown.files].sort((a, b) => {
    const primary = key === 'path' || key === 'subcategory' ? compareNames(a[key], b[key]) : a[key] - b[key];
    return (primary || compareNames(a.path, b.path)) * direction;
  });
  // Once the digest on screen is read whole, each path it holds links to its place there.
  const jumps = digest?.complete ? digest.positions : null;
  const fragment = document.createDocumentFragment();
  for (const file of rows.slice(0, MAX_TABLE_ROWS)) {
    const tr = document.createElement('tr');
    tr.append(
      pathCell(displayPath(file.path), jumps),
      cell(file.subcategory, `sub sub-${file.subcategory}`),
      cell(formatSize(file.size), 'num', `${file.size} bytes`),
      cell(file.tokens.toLocaleString('en-US'), 'num'),
    );
    fragment.append(tr);
  }
  ui.rows.replaceChildren(fragment);
  ui.tableNote.hidden = rows.length <= MAX_TABLE_ROWS;
  ui.tableNote.textContent = `Showing the first ${MAX_TABLE_ROWS.toLocaleString('en-US')} of ${rows.length.toLocaleString('en-US')} files in this order; the totals count them all.`;
  for (const th of ui.table.querySelectorAll('th[data-key]')) {
    th.setAttribute(
      'aria-sort',
      th.getAttribute('data-key') === key ? (descending ? 'descending' : 'ascending') : 'none',
    );
  }
}

/**
 * A path that may break after each `/` on a narrow screen, rather than anywhere; a link to its
 * place in the digest when `jumps` has it.
 * @param {string} path @param {Map<string, number> | null} jumps
 */
function pathCell(path, jumps) {
  const td = document.createElement('td');
  td.className = 'path';
  /** @type {HTMLElement} */
  let holder = td;
  if (jumps?.has(path)) {
    const a = document.createElement('a');
    a.href = '#digest';
    a.className = 'jump';
    a.dataset.path = path;
    a.title = 'Show this file in the digest';
    td.append(a);
    holder = a;
  }
  path.split('/').forEach((part, index) => {
    if (index > 0) holder.append('/', document.createElement('wbr'));
    holder.append(part);
  });
  return td;
}

/** @param {string} text @param {string} className @param {string} [title] */
function cell(text, className, title) {
  const td = document.createElement('td');
  td.className = className;
  td.textContent = text;
  if (title) td.title = title;
  return td;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/** @param {string} tag @param {Record<string, string | number>} attributes @param {string} [text] */
function svg(tag, attributes, text) {
  const element = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  if (text !== undefined) element.textContent = text;
  return element;
}

/** Horizontal bars, one per subcategory with tokens, longest first. @param {Record<string, number>} byType @param {number} total */
function drawChart(byType, total) {
  const entries = Object.entries(byType)
    .filter(([, tokens]) => tokens > 0)
    .sort((a, b) => b[1] - a[1] || compareNames(a[0], b[0]));
  if (entries.length === 0) {
    ui.chart.textContent = 'No tokens: no textual file is selected.';
    return;
  }
  // One SVG unit per CSS pixel, so labels keep their size on a phone and on a wide screen.
  const width = Math.max(240, Math.min(576, Math.floor(ui.chart.clientWidth) || 420));
  const rowHeight = 28;
  const labelWidth = 70;
  const valueWidth = 100;
  const barSpace = width - labelWidth - valueWidth;
  const largest = entries[0]?.[1] ?? 1;
  const percent = (/** @type {number} */ tokens) => (total > 0 ? Math.round((tokens / total) * 100) : 0);
  const height = entries.length * rowHeight;
  const chart = svg('svg', {
    viewBox: `0 0 ${width} ${height}`,
    width,
    height,
    role: 'img',
    'aria-labelledby': 'chart-title',
    class: 'bars',
  });
  chart.append(
    svg(
      'title',
      { id: 'chart-title' },
      `Tokens by subcategory: ${entries.map(([name, tokens]) => `${name} ${tokens} (${percent(tokens)} %)`).join(', ')}`,
    ),
  );
  entries.forEach(([name, tokens], index) => {
    const y = index * rowHeight;
    const barWidth = Math.max(2, (tokens / largest) * barSpace);
    const row = svg('g', { class: `bar-row sub-${name}`, 'data-subcategory': name, 'data-tokens': tokens });
    row.append(
      svg('text', { x: 0, y: y + 19, class: 'bar-label' }, name),
      svg('rect', { x: labelWidth, y: y + 6, width: barWidth.toFixed(1), height: 16, rx: 3, class: 'bar' }),
      svg(
        'text',
        { x: labelWidth + barWidth + 6, y: y + 19, class: 'bar-value' },
        `${formatTokens(tokens)} · ${percent(tokens)} %`,
      ),
    );
    chart.append(row);
  });
  ui.chart.replaceChildren(chart);
  chartWidth = width;
}

// Redraw the chart when its box changes width (rotation, window resize, layout switch).
let chartWidth = 0;
new ResizeObserver(() => {
  const width = Math.floor(ui.chart.clientWidth);
  if (shown && width > 0 && Math.abs(width - chartWidth) > 8) drawChart(shown.totals.tokensByType, shown.totals.tokens);
}).observe(ui.chart);

for (const th of ui.table.querySelectorAll('th[data-key]')) {
  th.querySelector('button')?.addEventListener('click', () => {
    const key = /** @type {typeof sort.key} */ (th.getAttribute('data-key'));
    // A new column starts in its most useful order: names A→Z, numbers largest first.
    sort.descending = sort.key === key ? !sort.descending : key === 'size' || key === 'tokens';
    sort.key = key;
    renderRows();
  });
}

// ---------------------------------------------------------------------------------------------
// The live preview follows the form, but only settled input: a text field counts as settled when
// it loses focus or Enter is pressed, or after a pause, longer in the source fields because a
// half-typed path is refused. A newer request aborts the one in flight and an answer to input that
// has changed since is dropped, so a preview costs one request per settled form, not one per key.

// The source: long enough that typing a path at an ordinary pace sends nothing until a pause.
const SOURCE_PAUSE_MS = 1000;
const OPTION_PAUSE_MS = 500;

/** @type {ReturnType<typeof setTimeout> | undefined} */
let previewTimer;
/** @type {AbortController | null} */
let previewRequest = null;
/** The inspect body of the request in flight. */
let requestedKey = '';
/** The inspect body whose answer is on screen, so an unchanged form is not asked again. */
let shownKey = '';
/**
 * The last inspect body the API refused (4xx) and its answer: a hint while the source is still
 * being typed, an error once it settles, without asking the API again for the same form.
 * @type {{ key: string, problem: Problem } | null}
 */
let refused = null;
/** The text field being typed in: set on input, cleared when it settles (blur, Enter). @type {HTMLElement | null} */
let typingIn = null;

/** The inspect body the form makes now. */
function previewKey() {
  return JSON.stringify({ ...sourceFields(), ...selectionOptions() });
}

function cancelPreviewRequest() {
  previewRequest?.abort();
  previewRequest = null;
  requestedKey = '';
}

/** Preview the form after `delay` ms of quiet, unless that is already on screen or on its way. @param {number} delay */
function schedulePreview(delay) {
  clearTimeout(previewTimer);
  if (mode() === 'zip') {
    cancelPreviewRequest();
    showZipPreviewHint();
    return;
  }
  const key = previewKey();
  if (previewRequest && key === requestedKey) return;
  cancelPreviewRequest();
  // A refusal of other input is out of date: it does not stay on screen while the form settles.
  showProblem(ui.previewError, null);
  if (shown && key === shownKey) {
    setPreviewState('ready', readyMessage(shown));
    return;
  }
  if (refused && refused.key === key) {
    showRefusal(refused.problem, true);
    return;
  }
  if (shown) setPreviewState('stale', 'Options changed: the preview follows when you pause or leave the field.');
  else if (sourceFields().repo_path) setPreviewState('empty', 'The preview follows when you pause or leave the field.');
  previewTimer = setTimeout(() => void runPreview(), delay);
}

function showZipPreviewHint() {
  clearPreview();
  shownKey = '';
  refused = null;
  setPreviewState(
    'empty',
    'ZIP uploads are previewed from the finished scan: press Scan, and the preview appears when it completes.',
  );
}

/**
 * A 4xx while the source is still being typed (a half-typed path is outside the allowed roots,
 * or not there yet) is a quiet hint in the status line; otherwise the API's sentence as an error.
 * @param {Problem} problem @param {boolean} clientError
 */
function showRefusal(problem, clientError) {
  if (clientError && (typingIn === ui.repoPath || typingIn === ui.branch)) {
    showProblem(ui.previewError, null);
    setPreviewState('hint', `No preview yet: ${problem.detail}`);
  } else {
    showProblem(ui.previewError, problem);
    setPreviewState('error', 'The preview could not be made.');
  }
}

async function runPreview() {
  if (mode() !== 'path') return;
  const source = sourceFields();
  if (!source.repo_path) {
    clearPreview();
    shownKey = '';
    refused = null;
    setPreviewState('empty', 'Type a repository URL or a server path to see a preview.');
    return;
  }
  const key = previewKey();
  if (key === shownKey && shown) {
    setPreviewState('ready', readyMessage(shown));
    return;
  }
  const request = new AbortController();
  previewRequest = request;
  requestedKey = key;
  setPreviewState('loading', shown ? 'Updating the preview…' : 'Loading the preview…');
  try {
    const data = await callApi('/v1/inspect', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: key,
      signal: request.signal,
    });
    if (request !== previewRequest) return;
    const preview = previewFromInspect(data);
    shownKey = key;
    refused = null;
    renderPreview(preview);
    setPreviewState('ready', readyMessage(preview));
  } catch (error) {
    if (request.signal.aborted || request !== previewRequest) return;
    const problem = toProblem(error);
    if (error instanceof ApiProblem && error.status === 429) {
      // Busy slots or the preview budget: nothing is wrong with the input, so ask again when told.
      setPreviewState(shown ? 'stale' : 'hint', `Preview paused: ${problem.detail}`);
      previewTimer = setTimeout(() => void runPreview(), Math.min(60, Math.max(1, error.retryAfter)) * 1000);
      return;
    }
    shownKey = '';
    clearPreview();
    const clientError = error instanceof ApiProblem && error.status >= 400 && error.status < 500;
    refused = clientError ? { key, problem } : null;
    showRefusal(problem, clientError);
  } finally {
    if (request === previewRequest) {
      previewRequest = null;
      requestedKey = '';
    }
  }
}

/** @param {Preview} preview */
function readyMessage(preview) {
  const where = preview.branch ? `${preview.name} @ ${preview.branch}` : preview.name;
  return (
    (preview.exact
      ? `${where}, from the finished scan (exact token counts).`
      : `${where}: a preview with estimated token counts; nothing is stored.`) +
    secretsNote(preview.secrets) +
    compressionNote(preview.compression)
  );
}

/** The form changed: a scan refusal on screen was about what was submitted before, so it goes. */
function onEdited() {
  showProblem(ui.scanError, null);
}

function onModeChange() {
  const zip = mode() === 'zip';
  ui.pathSource.hidden = zip;
  ui.zipSource.hidden = !zip;
  // Uploads take no branch and no base ref: the archive is the tree, without history.
  ui.branchField.hidden = zip;
  ui.baseRefField.hidden = zip;
  onEdited();
  schedulePreview(0);
}

ui.modePath.addEventListener('change', onModeChange);
ui.modeZip.addEventListener('change', onModeChange);
for (const [input, pause] of /** @type {[HTMLInputElement | HTMLTextAreaElement, number][]} */ ([
  [ui.repoPath, SOURCE_PAUSE_MS],
  [ui.branch, SOURCE_PAUSE_MS],
  [ui.includePatterns, OPTION_PAUSE_MS],
  [ui.excludePatterns, OPTION_PAUSE_MS],
  [ui.excludeDirs, OPTION_PAUSE_MS],
  [ui.treeDepth, OPTION_PAUSE_MS],
  [ui.sizeLimit, OPTION_PAUSE_MS],
])) {
  input.addEventListener('input', () => {
    typingIn = input;
    onEdited();
    schedulePreview(pause);
  });
  // Leaving the field or pressing Enter (change), or leaving it unchanged (blur): it is settled.
  const settle = () => {
    if (typingIn === input) typingIn = null;
    schedulePreview(0);
  };
  input.addEventListener('change', settle);
  input.addEventListener('blur', settle);
}
for (const input of [ui.docsOnly, ui.syncIgnore, ui.skipTree, ui.secrets, ui.compress, ui.removeComments]) {
  input.addEventListener('change', () => {
    onEdited();
    schedulePreview(0);
  });
}
// Output options are not previewed, but an error under Scan may be about them.
for (const input of [ui.baseRef, ui.maxTokens]) input.addEventListener('input', onEdited);
for (const input of [ui.lite, ui.createZip]) input.addEventListener('change', onEdited);
ui.zipFile.addEventListener('change', () => {
  onEdited();
  const file = ui.zipFile.files?.[0];
  if (file)
    setPreviewState(
      'empty',
      `${file.name} (${formatSize(file.size)}) is ready: press Scan; the preview appears when the scan completes.`,
    );
});

// ---------------------------------------------------------------------------------------------
// The digest in the page: the finished scan's Markdown (or text) artifact, read from the download
// route as a stream and split into lines a slice at a time, yielding to the browser between
// slices, so a digest of tens of MB never blocks the tab. Only the lines in view are in the DOM;
// the scroll bar's length comes from a spacer. Copy puts the whole artifact on the clipboard.

// Larger digests wait for "Show in the page", so a scan does not download them unasked.
const AUTO_SHOW_BYTES = 8 * 1024 ** 2;
// A minified file can be one line of megabytes: beyond this many characters a line is cut on screen.
const MAX_SHOWN_LINE = 2000;
// Below every browser's tallest element; past it the scroll position maps to lines by proportion.
const MAX_SCROLL_PX = 8_000_000;
const SLICE_MS = 12;
const READ_PIECE = 256 * 1024;
const TXT_RULE = '='.repeat(64);

/**
 * @typedef {{ url: string, format: string, bytes: number, lines: string[], positions: Map<string, number>,
 *   complete: boolean, abort: AbortController }} Digest
 */

/** The finished scan whose digest the section offers. @type {ScanResult | null} */
let digestResult = null;
/** @type {Digest | null} */
let digest = null;
/** The line a jump went to (highlighted), and the line pinned at a scroll position set by a jump or a key. */
let targetLine = -1;
/** @type {{ line: number, scrollTop: number } | null} */
let pinned = null;
let drawQueued = false;

const yieldToBrowser = () => new Promise((resolve) => setTimeout(resolve, 0));

function digestFormat() {
  return ui.digestTxt.checked ? 'txt' : 'md';
}

/** @param {ScanResult} result */
function offerDigest(result) {
  digestResult = result;
  closeDigest();
  ui.digest.hidden = false;
  ui.digestMd.disabled = !result.artifacts.md;
  ui.digestTxt.disabled = !result.artifacts.txt;
  if (!result.artifacts.md && result.artifacts.txt) ui.digestTxt.checked = true;
  offerFormat();
}

function offerFormat() {
  closeDigest();
  const artifact = digestArtifact(digestResult, digestFormat());
  if (!artifact) {
    ui.digestStatus.textContent = 'This scan made no text digest.';
    ui.digestCopy.disabled = true;
    return;
  }
  ui.digestCopy.disabled = false;
  if (artifact.bytes <= AUTO_SHOW_BYTES) {
    void loadDigest();
  } else {
    ui.digestShow.hidden = false;
    ui.digestStatus.textContent = `The digest is ${formatSize(artifact.bytes)}: Show in the page draws it a screen at a time; Copy and the download take it whole.`;
  }
}

function closeDigest() {
  digest?.abort.abort();
  digest = null;
  targetLine = -1;
  pinned = null;
  ui.digestView.hidden = true;
  ui.digestShow.hidden = true;
  ui.digestLines.replaceChildren();
  ui.digestSpacer.style.height = '0';
  showProblem(ui.digestError, null);
  renderRows();
}

function hideDigest() {
  closeDigest();
  digestResult = null;
  ui.digest.hidden = true;
}

/**
 * Where each file starts in a Markdown digest: its `### <code span>` heading outside any fence.
 * A file's fence is longer than any backtick run inside it, so only its closing line equals it.
 * @param {Map<string, number>} positions
 */
function markdownIndexer(positions) {
  let fence = '';
  return (/** @type {string} */ line, /** @type {number} */ index) => {
    if (fence) {
      if (line === fence) fence = '';
      return;
    }
    if (line.startsWith('```')) {
      fence = /^`+/.exec(line)?.[0] ?? '';
      return;
    }
    if (line.startsWith('### `')) {
      const path = codeSpanText(line.slice(4));
      if (path !== null && !positions.has(path)) positions.set(path, index);
    }
  };
}

/** The text of a CommonMark code span as the digest writes it (padded when it starts or ends with a backtick). @param {string} span */
function codeSpanText(span) {
  const ticks = /^`+/.exec(span)?.[0] ?? '';
  if (!ticks || span.length < 2 * ticks.length || !span.endsWith(ticks)) return null;
  const text = span.slice(ticks.length, span.length - ticks.length);
  const padded =
    text.length >= 2 &&
    text.startsWith(' ') &&
    text.endsWith(' ') &&
    (text[1] === '`' || text[text.length - 2] === '`');
  return padded ? text.slice(1, -1) : text;
}

/** In a text digest a file starts with a rule and `FILE: <path>`; the first such pair per path counts. @param {Map<string, number>} positions */
function textIndexer(positions) {
  let previous = '';
  return (/** @type {string} */ line, /** @type {number} */ index) => {
    if (previous === TXT_RULE && line.startsWith('FILE: ')) {
      const path = line.slice(6);
      if (!positions.has(path)) positions.set(path, index - 1);
    }
    previous = line;
  };
}

async function loadDigest() {
  const artifact = digestArtifact(digestResult, digestFormat());
  if (!artifact) return;
  closeDigest();
  /** @type {Digest} */
  const d = {
    url: artifact.url,
    format: digestFormat(),
    bytes: artifact.bytes,
    lines: [],
    positions: new Map(),
    complete: false,
    abort: new AbortController(),
  };
  digest = d;
  ui.digestView.hidden = false;
  ui.digestView.scrollTop = 0;
  ui.digestStatus.textContent = `Loading the digest (${formatSize(artifact.bytes)})…`;
  const index = d.format === 'md' ? markdownIndexer(d.positions) : textIndexer(d.positions);
  /** Pieces of the line not ended yet: joined once, so a line of megabytes costs no repeated copies. @type {string[]} */
  let open = [];
  /** @param {string} line */
  const addLine = (line) => {
    index(line, d.lines.length);
    d.lines.push(line);
  };
  try {
    const response = await apiFetch(d.url, { signal: d.abort.signal });
    if (!response.ok || !response.body) {
      /** @type {any} */
      const body = await response.json().catch(() => null);
      throw new ApiProblem(
        typeof body?.detail === 'string' ? body.detail : `The server answered HTTP ${response.status}.`,
        typeof body?.code === 'string' ? body.code : `HTTP_${response.status}`,
        response.status,
      );
    }
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let received = 0;
    let sliceStart = performance.now();
    for (;;) {
      const { done, value } = await reader.read();
      if (digest !== d) return;
      // A buffered response can arrive in large chunks: take them a piece at a time.
      const pieces = [];
      if (value)
        for (let at = 0; at < value.byteLength; at += READ_PIECE) pieces.push(value.subarray(at, at + READ_PIECE));
      if (done) pieces.push(null);
      for (const piece of pieces) {
        const text = piece ? decoder.decode(piece, { stream: true }) : decoder.decode();
        if (piece) received += piece.byteLength;
        let start = 0;
        for (let newline = text.indexOf('\n'); newline !== -1; newline = text.indexOf('\n', start)) {
          const end = text.slice(start, newline);
          addLine(open.length > 0 ? open.join('') + end : end);
          open = [];
          start = newline + 1;
        }
        if (start < text.length) open.push(text.slice(start));
        if (performance.now() - sliceStart > SLICE_MS) {
          ui.digestStatus.textContent = `Loading the digest: ${formatSize(received)} of ${formatSize(d.bytes)}…`;
          scheduleDraw();
          await yieldToBrowser();
          if (digest !== d) return;
          sliceStart = performance.now();
        }
      }
      if (done) break;
    }
    if (open.length > 0) addLine(open.join(''));
    d.complete = true;
    const jumps = d.positions.size > 0 ? ' The paths in the file table jump to their files here.' : '';
    ui.digestStatus.textContent = `${d.lines.length.toLocaleString('en-US')} lines, ${formatSize(d.bytes)}.${jumps}`;
    drawDigest();
    renderRows();
  } catch (error) {
    if (d.abort.signal.aborted || digest !== d) return;
    ui.digestStatus.textContent = 'The digest could not be shown here; the download buttons still have it.';
    showProblem(
      ui.digestError,
      error instanceof TypeError
        ? {
            detail: 'Could not reach the API. Check that the server is running, then try again.',
            code: 'NETWORK_ERROR',
          }
        : toProblem(error),
    );
  }
}

function scheduleDraw() {
  if (drawQueued) return;
  drawQueued = true;
  requestAnimationFrame(() => {
    drawQueued = false;
    drawDigest();
  });
}

/** @param {Digest} d */
function digestGeometry(d) {
  const lineHeight = parseFloat(getComputedStyle(ui.digestLines).getPropertyValue('--line-height')) || 18;
  const view = ui.digestView.clientHeight;
  const visible = Math.max(1, Math.floor(view / lineHeight));
  const height = Math.max(view, Math.min(d.lines.length * lineHeight, MAX_SCROLL_PX));
  return {
    lineHeight,
    visible,
    height,
    scrollRange: Math.max(0, height - view),
    lineRange: Math.max(0, d.lines.length - visible),
  };
}

function drawDigest() {
  const d = digest;
  if (!d) return;
  const g = digestGeometry(d);
  ui.digestSpacer.style.height = `${Math.max(0, g.height - ui.digestView.clientHeight)}px`;
  const top = ui.digestView.scrollTop;
  const first =
    pinned && Math.abs(pinned.scrollTop - top) < 1
      ? pinned.line
      : g.scrollRange > 0
        ? Math.min(g.lineRange, Math.round((top / g.scrollRange) * g.lineRange))
        : 0;
  const fragment = document.createDocumentFragment();
  for (let i = first; i < Math.min(d.lines.length, first + g.visible + 1); i++) {
    const line = d.lines[i] ?? '';
    const div = document.createElement('div');
    div.className = i === targetLine ? 'line target' : 'line';
    div.dataset.line = String(i + 1);
    div.textContent =
      line.length > MAX_SHOWN_LINE
        ? `${line.slice(0, MAX_SHOWN_LINE)} … (${(line.length - MAX_SHOWN_LINE).toLocaleString('en-US')} more characters: Copy or download the digest for them)`
        : line;
    fragment.append(div);
  }
  ui.digestLines.replaceChildren(fragment);
}

/** Scroll so that `line` (0-based) is the first in view. @param {number} line */
function scrollToLine(line) {
  const d = digest;
  if (!d) return;
  const g = digestGeometry(d);
  const first = Math.max(0, Math.min(g.lineRange, Math.round(line)));
  ui.digestView.scrollTop = g.lineRange > 0 ? (first / g.lineRange) * g.scrollRange : 0;
  // The browser rounds scrollTop; the line asked for is what is drawn at that position.
  pinned = { line: first, scrollTop: ui.digestView.scrollTop };
  drawDigest();
}

/** The first line in view now. */
function firstShownLine() {
  return Number(ui.digestLines.firstElementChild?.getAttribute('data-line') ?? '1') - 1;
}

/** Show a file's heading at the top of the digest view and put the keyboard there. @param {string} path */
function jumpToFile(path) {
  const line = digest?.positions.get(path);
  if (line === undefined) return;
  targetLine = line;
  scrollToLine(line);
  ui.digest.scrollIntoView({ block: 'start' });
  ui.digestView.focus({ preventScroll: true });
  ui.digestStatus.textContent = `${path}: line ${(line + 1).toLocaleString('en-US')} of ${(digest?.lines.length ?? 0).toLocaleString('en-US')}.`;
}

ui.digestView.addEventListener('scroll', () => {
  if (pinned && Math.abs(pinned.scrollTop - ui.digestView.scrollTop) >= 1) pinned = null;
  scheduleDraw();
});
// A scroll step of a few pixels can be many lines when the digest is scaled: keys move by lines.
ui.digestView.addEventListener('keydown', (event) => {
  const d = digest;
  if (!d || event.altKey || event.ctrlKey || event.metaKey) return;
  const page = digestGeometry(d).visible;
  /** @type {Record<string, number>} */
  const steps = { ArrowDown: 1, ArrowUp: -1, PageDown: page, PageUp: -page, ' ': event.shiftKey ? -page : page };
  const first = firstShownLine();
  if (event.key === 'Home') scrollToLine(0);
  else if (event.key === 'End') scrollToLine(d.lines.length);
  else if (event.key in steps) scrollToLine(first + (steps[event.key] ?? 0));
  else return;
  event.preventDefault();
});
new ResizeObserver(() => scheduleDraw()).observe(ui.digestView);

ui.digestShow.addEventListener('click', () => void loadDigest());
for (const radio of [ui.digestMd, ui.digestTxt]) radio.addEventListener('change', offerFormat);
ui.rows.addEventListener('click', (event) => {
  const link = event.target instanceof Element ? event.target.closest('a.jump') : null;
  if (!(link instanceof HTMLAnchorElement)) return;
  event.preventDefault();
  jumpToFile(link.dataset.path ?? '');
});

ui.digestCopy.addEventListener('click', () => void copyDigest());

async function copyDigest() {
  const artifact = digestArtifact(digestResult, digestFormat());
  if (!artifact) return;
  showProblem(ui.digestError, null);
  ui.digestStatus.textContent = `Copying the digest (${formatSize(artifact.bytes)})…`;
  // The clipboard takes the text as a promise, so the download may finish after the click.
  const text = apiFetch(artifact.url).then(async (response) => {
    if (!response.ok)
      throw new ApiProblem(`The server answered HTTP ${response.status}.`, `HTTP_${response.status}`, response.status);
    return new Blob([await response.blob()], { type: 'text/plain' });
  });
  try {
    await navigator.clipboard.write([new ClipboardItem({ 'text/plain': text })]);
    ui.digestStatus.textContent = `Copied the whole digest (${formatSize(artifact.bytes)}) to the clipboard.`;
  } catch (error) {
    ui.digestStatus.textContent = 'The digest was not copied.';
    const refused = error instanceof DOMException && error.name === 'NotAllowedError';
    showProblem(
      ui.digestError,
      refused
        ? {
            detail:
              'The browser did not allow this page to write to the clipboard. Allow it, or use the download button.',
            code: 'CLIPBOARD_DENIED',
          }
        : toProblem(error),
    );
  }
}

// ---------------------------------------------------------------------------------------------
// Scanning: submit with ?wait=false, follow the events, then offer the downloads.

// Progress by phase: reading files is most of the work; the bar only moves forward.
/** @type {Record<string, [number, number]>} */
const PHASE_SPAN = {
  queued: [0, 0],
  clone: [0, 10],
  extract: [0, 10],
  walk: [10, 15],
  read: [15, 90],
  render: [90, 95],
  zip: [95, 98],
  publish: [98, 99],
  done: [99, 99],
};
/** @type {Record<string, string>} */
const PHASE_LABEL = {
  queued: 'Queued',
  clone: 'Cloning',
  extract: 'Unpacking',
  walk: 'Listing files',
  read: 'Reading files',
  render: 'Writing outputs',
  zip: 'Building the ZIP',
  publish: 'Publishing',
  done: 'Finishing',
};
/** @type {Record<string, string>} */
const FORMAT_LABEL = { txt: 'Text (.txt)', md: 'Markdown (.md)', json: 'JSON (.json)', zip: 'ZIP bundle (.zip)' };

let scanning = false;

/** @param {ScanStatus} status */
function showProgress(status) {
  const { phase, files_done: done, files_total: total } = status.progress;
  let value = status.state === 'completed' ? 100 : ui.progress.value;
  if (status.state === 'queued' || status.state === 'running') {
    const [from, to] = PHASE_SPAN[phase] ?? [0, 0];
    const share = total > 0 ? Math.min(1, done / total) : 0;
    value = Math.max(ui.progress.value, Math.round(from + (to - from) * share));
  }
  ui.progress.value = value;
  ui.progress.textContent = `${value} %`;
  const files = total > 0 ? ` · ${done.toLocaleString('en-US')} / ${total.toLocaleString('en-US')} files` : '';
  const label =
    status.state === 'running' || status.state === 'queued' ? (PHASE_LABEL[phase] ?? phase) : capitalize(status.state);
  ui.progressText.textContent = `${label}${files} · ${value} %`;
}

/** @param {string} text */
function capitalize(text) {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/**
 * Follow the scan's events until a terminal state: the event stream read through fetch, which,
 * unlike EventSource, can send the API key. When the stream cannot be opened, or ends before a
 * terminal state (a dropped connection, the server stopping), the status URL is polled instead,
 * which also brings the API's refusal (a 401, say) to the page.
 * @param {Accepted} accepted
 * @returns {Promise<ScanStatus>}
 */
async function followScan(accepted) {
  const stream = new AbortController();
  try {
    const response = await apiFetch(accepted.events_url, {
      headers: { accept: 'text/event-stream' },
      signal: stream.signal,
    });
    if (response.ok && response.body) {
      for await (const event of serverSentEvents(response.body)) {
        if (event.name !== 'state' && event.name !== 'progress') continue;
        /** @type {ScanStatus} */
        const status = JSON.parse(event.data);
        showProgress(status);
        if (TERMINAL_STATES.has(status.state)) return status;
      }
    }
  } catch {
    // No stream, or it broke: the status URL tells the rest.
  } finally {
    stream.abort();
  }
  return pollScan(accepted.status_url);
}

/**
 * The events of a text/event-stream body as they arrive: `{ name, data }` each; comments (the
 * keep-alives) are skipped.
 * @param {ReadableStream<Uint8Array>} body
 * @returns {AsyncGenerator<{ name: string, data: string }>}
 */
async function* serverSentEvents(body) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let name = '';
  /** @type {string[]} */
  let data = [];
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      const lines = buffer.split(/\r\n|\n|\r/);
      buffer = lines.pop() ?? '';
      for (const line of lines) {
        if (line === '') {
          if (data.length > 0) yield { name: name || 'message', data: data.join('\n') };
          name = '';
          data = [];
        } else if (line.startsWith('event:')) name = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

/** @param {string} statusUrl @returns {Promise<ScanStatus>} */
async function pollScan(statusUrl) {
  for (;;) {
    /** @type {ScanStatus} */
    const status = await callApi(statusUrl);
    showProgress(status);
    if (TERMINAL_STATES.has(status.state)) return status;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

/** @returns {Promise<Accepted>} */
async function submitScan() {
  if (mode() === 'zip') {
    const file = ui.zipFile.files?.[0];
    if (!file) throw new ApiProblem('Choose a .zip file to upload first.', '');
    const form = new FormData();
    form.append('file', file, file.name);
    return callApi(`/v1/upload?${uploadQuery()}`, { method: 'POST', body: form });
  }
  const source = sourceFields();
  if (!source.repo_path) throw new ApiProblem('Type a repository URL or a server path first.', '');
  return callApi('/v1/scan?wait=false', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...source, ...scanOptions(), ...changeDigestOption() }),
  });
}

/**
 * After a scan, the preview shows the scan's own figures (exact token counts), not the estimate
 * it had before: one set of numbers on the page. A preview still on its way is for the same form
 * and would only bring the estimate back, so it is dropped.
 * @param {Preview} preview @param {string} key the inspect body the scan answers ('' for an upload)
 */
function showExactPreview(preview, key) {
  clearTimeout(previewTimer);
  cancelPreviewRequest();
  refused = null;
  shownKey = key;
  renderPreview(preview);
  setPreviewState('ready', readyMessage(preview));
}

/**
 * What the page shows as a format's digest: the output, or its part 1 when it is in parts
 * (max_tokens_per_part), whose URL without `part` the API refuses.
 * @param {ScanResult | null} result @param {string} format @returns {Artifact | undefined}
 */
function digestArtifact(result, format) {
  const artifact = result?.artifacts[format];
  return artifact?.parts?.[0] ?? artifact;
}

/** @param {ScanResult} result */
function showDownloads(result) {
  ui.resultText.textContent = `${result.repo_name}: ${result.summary.total_files.toLocaleString('en-US')} files, ${result.summary.formatted.total_size}, ${result.summary.formatted.estimated_tokens} tokens (exact).${secretsNote(result.secrets)}${compressionNote(result.compression)}`;
  const items = Object.entries(result.artifacts).flatMap(([format, artifact]) =>
    artifact.parts
      ? artifact.parts.map((part) =>
          downloadLink(
            part.url,
            `${FORMAT_LABEL[format] ?? format}, part ${part.part} of ${artifact.parts?.length}`,
            `${formatSize(part.bytes)}, ${part.tokens.toLocaleString('en-US')} tokens`,
            format,
          ),
        )
      : [downloadLink(artifact.url, `${FORMAT_LABEL[format] ?? format}`, formatSize(artifact.bytes), format)],
  );
  items.push(
    downloadLink(
      `/v1/summary/${result.scan_id}`,
      'Summary (.json)',
      'metadata',
      'summary',
      `${result.repo_name}-summary.json`,
    ),
  );
  ui.downloads.replaceChildren(...items);
  showChanges(result.changes);
  ui.scanResult.hidden = false;
}

/**
 * A change digest's line: `Changes since v1 (61e34bf) → f9b422e: 2 added, …`, commits shortened
 * as git shows them, each whole in its title.
 * @param {Changes | undefined} changes
 */
function showChanges(changes) {
  ui.resultChanges.hidden = !changes;
  if (!changes) {
    ui.resultChanges.replaceChildren();
    return;
  }
  /** @param {string | null} commit */
  const short = (commit) => {
    const code = document.createElement('code');
    code.textContent = commit ? commit.slice(0, 7) : '?';
    if (commit) code.title = commit;
    return code;
  };
  ui.resultChanges.replaceChildren(
    `Changes since ${displayPath(changes.base_ref)} (`,
    short(changes.base_commit),
    ') → ',
    short(changes.head_commit),
    `: ${changeCountsLine(changes.counts)}.`,
  );
}

// With an API key a link cannot download by itself (a navigation sends no header): the file is
// fetched with the key and handed to the browser as a blob under the API's own file name.
ui.downloads.addEventListener('click', (event) => {
  const link = event.target instanceof Element ? event.target.closest('a[data-format]') : null;
  if (!(link instanceof HTMLAnchorElement) || !authHeaders().authorization) return;
  event.preventDefault();
  void downloadWithKey(link);
});

/** @param {HTMLAnchorElement} link */
async function downloadWithKey(link) {
  showProblem(ui.scanError, null);
  try {
    const response = await apiFetch(link.href).catch(() => {
      throw new ApiProblem(
        'Could not reach the API. Check that the server is running, then try again.',
        'NETWORK_ERROR',
      );
    });
    if (!response.ok) {
      /** @type {any} */
      const body = await response.json().catch(() => null);
      throw new ApiProblem(
        typeof body?.detail === 'string' ? body.detail : `The server answered HTTP ${response.status}.`,
        typeof body?.code === 'string' ? body.code : `HTTP_${response.status}`,
        response.status,
      );
    }
    const url = URL.createObjectURL(await response.blob());
    const save = document.createElement('a');
    save.href = url;
    save.download = link.download || fileNameOf(response.headers.get('content-disposition')) || 'download';
    document.body.append(save);
    save.click();
    save.remove();
    // The browser has taken the file once the click is handled; a minute is plenty.
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
  } catch (error) {
    showProblem(ui.scanError, toProblem(error));
  }
}

/** The file name a Content-Disposition header gives (RFC 6266: filename* first). @param {string | null} header */
function fileNameOf(header) {
  const extended = /filename\*=UTF-8''([^;]+)/i.exec(header ?? '');
  if (extended?.[1]) {
    try {
      return decodeURIComponent(extended[1]);
    } catch {
      // fall back to the plain name
    }
  }
  const plain = /filename=(?:"([^"]*)"|([^;\s]+))/i.exec(header ?? '');
  return plain?.[1] ?? plain?.[2] ?? '';
}

/** @param {string} href @param {string} label @param {string} note @param {string} format @param {string} [fileName] */
function downloadLink(href, label, note, format, fileName) {
  const li = document.createElement('li');
  const a = document.createElement('a');
  a.href = href;
  a.className = 'button';
  a.dataset.format = format;
  // The API names its artifacts (Content-Disposition); the summary is a JSON answer, so name it here.
  a.download = fileName ?? '';
  a.textContent = label;
  const small = document.createElement('small');
  small.textContent = note;
  a.append(' ', small);
  li.append(a);
  return li;
}

async function startScan() {
  if (scanning) return;
  scanning = true;
  ui.scanButton.disabled = true;
  ui.scanButton.textContent = 'Scanning…';
  ui.scanResult.hidden = true;
  ui.downloads.replaceChildren();
  hideDigest();
  showProblem(ui.scanError, null);
  ui.progress.value = 0;
  ui.progressText.textContent = 'Submitting…';
  const uploading = mode() === 'zip';
  // The form the scan is for: its exact figures replace the preview only while the form still says that.
  const scanKey = uploading ? '' : previewKey();
  let submitted = false;
  try {
    const accepted = await submitScan();
    submitted = true;
    ui.progressText.textContent = 'Queued · 0 %';
    const status = await followScan(accepted);
    if (status.state === 'completed' && status.result) {
      showDownloads(status.result);
      offerDigest(status.result);
      // A change digest's figures are of the changed files only: the preview stays the repository's.
      if (!status.result.changes && (uploading ? mode() === 'zip' : previewKey() === scanKey)) {
        const summary = await callApi(`/v1/summary/${status.scan_id}`);
        if (uploading ? mode() === 'zip' : previewKey() === scanKey)
          showExactPreview(previewFromSummary(summary), scanKey);
      }
    } else if (status.state === 'failed' && status.error) {
      showProblem(ui.scanError, { detail: status.error.message, code: status.error.code });
    } else {
      showProblem(ui.scanError, { detail: 'The scan was cancelled before it finished.', code: 'SCAN_CANCELLED' });
    }
  } catch (error) {
    showProblem(ui.scanError, toProblem(error));
    if (!submitted) ui.progressText.textContent = 'Not started.';
  } finally {
    scanning = false;
    ui.scanButton.disabled = false;
    ui.scanButton.textContent = 'Scan';
  }
}

ui.form.addEventListener('submit', (event) => {
  event.preventDefault();
  void startScan();
});

// The key typed in this tab before a reload; a changed key asks for the preview again (a
// refusal for want of a key is no longer the answer).
ui.apiKey.value = sessionStorage.getItem(API_KEY_STORAGE) ?? '';
ui.apiKey.addEventListener('input', () => {
  const key = ui.apiKey.value.trim();
  if (key === '') sessionStorage.removeItem(API_KEY_STORAGE);
  else sessionStorage.setItem(API_KEY_STORAGE, key);
  refused = null;
  shownKey = '';
  onEdited();
  schedulePreview(OPTION_PAUSE_MS);
});
ui.apiKey.addEventListener('change', () => schedulePreview(0));

// The browser may restore a typed path after a reload: preview it.
onModeChange();
