import type { InspectResult } from '@reposcan/contracts';
import { IoThreads } from '../io/io-threads.js';
import { compareNames } from '../path-order.js';
import { renderTree } from '../render/render-tree.js';
import { collectFiles } from './collect-files.js';
import { threadScanDeps } from './scan-deps.js';
import type { ScanDeps } from './scan-deps.js';
import { summarize } from './summarize.js';
import type {
  AssetRecord,
  EngineLimits,
  ProgressCallback,
  ScanOptions,
  SkippedPath,
  SkipReason,
  SourceInfo,
  SummaryTotals,
  TextFileRecord,
} from '../types.js';
import type { GitWorkTree } from '../walk/git-work-tree.js';
import type { SecretsSummary } from '../secrets/secret-scan.js';

export interface InspectInput {
  root: string;
  repoName: string;
  source: SourceInfo;
  options: ScanOptions;
  limits: EngineLimits;
  signal?: AbortSignal;
  /** Paths the walk skips for what the source says they are: a remote clone's links and submodules. */
  sourceSkips?: ReadonlyMap<string, SkipReason>;
  /** When the tree is a git work tree or a clone: its tracked files and `.git/info/exclude` (WalkInput.git). */
  git?: GitWorkTree;
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
}

/**
 * A preview in the API's shape (what `POST /v1/inspect` answers and `reposcan inspect --local`
 * prints): every kept file in name order, non-textual ones with 0 tokens.
 */
export function toInspectResult(report: InspectReport, commit: string | null): InspectResult {
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
  };
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
  };
}
