import type { InspectResult } from '@reposcan/contracts';
import { IoThreads } from '../io/io-threads.js';
import { compareNames } from '../path-order.js';
import { renderTree } from '../render/render-tree.js';
import { collectFiles } from './collect-files.js';
import type { CollectInput } from './collect-files.js';
import { threadScanDeps } from './scan-deps.js';
import type { ScanDeps } from './scan-deps.js';
import { summarize } from './summarize.js';
import type { AssetRecord, ProgressCallback, SkippedPath, SummaryTotals, TextFileRecord } from '../types.js';
import type { SecretsSummary } from '../secrets/secret-scan.js';
import type { CompressionSummary } from '../compress/code-transform.js';

/** A preview's input: what the walk and classification take, and the name the tree is drawn under. */
export interface InspectInput extends Pick<
  CollectInput,
  'root' | 'source' | 'options' | 'limits' | 'signal' | 'sourceSkips' | 'git' | 'absent'
> {
  repoName: string;
}

export interface InspectReport {
  name: string;
  branch: string | null;
  tree: string;
  summary: SummaryTotals;
  files: TextFileRecord[];
  assets: AssetRecord[];
  skipped: SkippedPath[];
  /** What secret detection found, counted as a scan counts them; absent with `secrets: off`. */
  secrets?: SecretsSummary;
  /** What compressed code did, with estimates before and after; absent with neither option. */
  compression?: CompressionSummary;
}

/**
 * A preview in the API's shape (what `POST /v1/inspect` answers and `reposcan inspect --local`
 * prints): every kept file in name order, non-textual ones with 0 tokens.
 */
export function toInspectResult(
  report: InspectReport,
  commit: string | null,
  maxTokensPerPart: number | null = null,
): InspectResult {
  const files = [
    ...report.files.map((f) => ({
      path: f.path,
      subcategory: f.subcategory,
      size_bytes: f.size_bytes,
      tokens_estimate: f.tokens_estimate,
      url: f.url,
      ...(f.replacements ? { replacements: f.replacements } : {}),
    })),
    ...report.assets.map((a) => ({
      path: a.path,
      subcategory: a.subcategory,
      size_bytes: a.size_bytes,
      tokens_estimate: 0,
      url: a.url,
    })),
  ].sort((a, b) => compareNames(a.path, b.path));
  return {
    repository: { name: report.name, branch: report.branch, commit, tree_summary: report.tree },
    summary: report.summary,
    files,
    skipped_count: report.skipped.length,
    ...(report.secrets === undefined ? {} : { secrets: report.secrets }),
    ...(report.compression === undefined ? {} : { compression: report.compression }),
    ...(maxTokensPerPart === null ? {} : { parts_estimate: estimateParts(report, maxTokensPerPart) }),
  };
}

/** Rough tokens of short ASCII-heavy text such as paths and the tree (about 3.5 bytes a token). */
const roughTokens = (text: string): number => Math.ceil(text.length / 3.5);
/** A part's header line and a file block's header, beyond the path they name (txt, rich). */
const PART_HEADER_TOKENS = 40;
const BLOCK_HEADER_TOKENS = 45;

/**
 * How many parts a scan's txt output would take under `budget`, from the preview's estimates: the
 * same packing as a scan (files whole unless one alone is over the budget), with the headers'
 * sizes guessed. An estimate: a scan counts exactly and md and json take a few per cent more.
 */
export function estimateParts(report: InspectReport, budget: number): number {
  const room = Math.max(1, budget - PART_HEADER_TOKENS);
  let parts = 1;
  let used = roughTokens(report.tree) + 20;
  if (used > room) {
    parts = Math.ceil(used / room);
    used = used % room;
  }
  for (const file of report.files) {
    const size = file.tokens_estimate + BLOCK_HEADER_TOKENS + 2 * roughTokens(file.path);
    if (used + size <= room) {
      used += size;
      continue;
    }
    parts += used > 0 ? 1 : 0;
    if (size <= room) used = size;
    else {
      parts += Math.ceil(size / room) - 1;
      used = size % room;
    }
  }
  const tail = 60 + report.assets.reduce((sum, a) => sum + roughTokens(a.path) + 6, 0);
  if (used + tail > room) parts += Math.ceil((used + tail - room) / room);
  return parts;
}

/**
 * The preview: the same walk and classification as a scan, but token counts are the fast
 * estimate and nothing is written anywhere. On its own it starts the threads it needs and ends
 * them when it is over; a long-lived process previews through an engine (createEngine).
 */
export async function inspectTree(
  input: InspectInput,
  overrides: Partial<ScanDeps> = {},
  onProgress: ProgressCallback = () => {},
): Promise<InspectReport> {
  const io = new IoThreads();
  try {
    return await previewTree(input, { ...threadScanDeps(io), ...overrides }, onProgress);
  } finally {
    await io.close();
  }
}

/** inspectTree over the given threads (an engine's). */
export async function previewTree(
  input: InspectInput,
  deps: ScanDeps,
  onProgress: ProgressCallback,
): Promise<InspectReport> {
  const collected = await collectFiles(input, deps, deps.estimateTokens, null, onProgress);
  return {
    name: input.repoName,
    branch: input.source.branch,
    tree: renderTree(input.repoName, collected.walkedPaths, input.options.treeDepth),
    summary: summarize(collected.files, collected.assets),
    files: collected.files,
    assets: collected.assets,
    skipped: collected.skipped,
    ...(collected.secrets === null ? {} : { secrets: collected.secrets }),
    ...(collected.compression === null ? {} : { compression: collected.compression }),
  };
}
