// Secret detection with secretlint's recommended preset, run on a file thread (file-thread.ts):
// the rules are regular expressions over whole texts, CPU the event loop must not spend.
// secretlint is loaded by the first text holding a rule's anchor, so a process that never checks
// one (a scan with `secrets: off` or without such text, the command line's start-up) never pays
// for its modules.
//
// Each rule runs only on the texts holding one of its anchors (rule-anchors.ts), found in one pass
// over the bytes; a text holding none is neither decoded nor given to secretlint. The texts that
// remain are checked as one joined text: secretlint spends more setting its rules up for a file
// than running them over a small one. A text is checked on its own when a rule reads its name
// (`.json`, `package.json`, `.npmrc`), when it has secretlint's ignore comments (they would reach
// into the next text), and when a finding of the joined check runs over a separator.
import { Buffer } from 'node:buffer';
import { basename, extname } from 'node:path/posix';
import type { SecretLintCoreConfig, SecretLintCoreResultMessage, SecretLintRuleCreator } from '@secretlint/types';
import { HIGH_ENTROPY_ANCHORS, HIGH_ENTROPY_RULE_ID, highEntropyRule } from './high-entropy-rule.js';
import { countLeading } from '../sorted-search.js';
import { anchoredRules, RULE_ANCHORS } from './rule-anchors.js';
import { redactionMark } from './secret-scan.js';
import type { SecretFinding, SecretScan } from './secret-scan.js';

/** Checks `text` under the file name `name` with the rules named in `only`. */
type Lint = (text: string, name: string, only: ReadonlySet<string>) => Promise<SecretLintCoreResultMessage[]>;

let loading: Promise<Lint> | null = null;
let anchored: ((bytes: Uint8Array) => Set<string>) | null = null;
const rulesAnchoredIn = (bytes: Uint8Array): Set<string> =>
  (anchored ??= anchoredRules(
    new Map([...Object.entries(RULE_ANCHORS), [HIGH_ENTROPY_RULE_ID, HIGH_ENTROPY_ANCHORS]]),
  ))(bytes);

async function loadLinter(): Promise<Lint> {
  const [{ lintSource }, { rules }, { secretLintProfiler }] = await Promise.all([
    import('@secretlint/core'),
    import('@secretlint/secretlint-rule-preset-recommend'),
    import('@secretlint/profiler'),
  ]);
  // On by default, it puts several performance marks per file and rule into a buffer nobody empties.
  secretLintProfiler.setEnabled(false);
  const all = new Map<string, { id: string; rule: SecretLintRuleCreator; options: object }>();
  for (const rule of [...(rules as SecretLintRuleCreator[]), highEntropyRule]) {
    const name = ruleName(rule.meta.id);
    // Access key IDs too (off by default): one names the account and is half of a key pair.
    all.set(name, { id: rule.meta.id, rule, options: name === 'aws' ? { enableIDScanRule: true } : {} });
  }
  const configs = new Map<string, SecretLintCoreConfig>();
  const configOf = (only: ReadonlySet<string>): SecretLintCoreConfig => {
    const names = [...all.keys()].filter((name) => only.has(name));
    const key = names.join(' ');
    let config = configs.get(key);
    if (!config)
      configs.set(key, (config = { rules: names.map((name) => all.get(name) as SecretLintCoreConfig['rules'][0]) }));
    return config;
  };
  return async (text, name, only) => {
    const ext = extname(name);
    const run = async (content: string): Promise<SecretLintCoreResultMessage[]> => {
      const result = await lintSource({
        // The file's name alone, never a path: the GCP rule reads a `.p12` file from disk by its path,
        // so that extension is never given (the text is already here; a real .p12 is not text).
        source: { filePath: name, ext: ext === '.p12' ? '' : ext, content, contentType: 'text' },
        options: { config: configOf(only), noPhysicFilePath: true },
      });
      return result.messages;
    };
    // secretlint compares each finding with every later one: a long text is checked window by
    // window, so the cost grows with the text, not with the square of its findings. Not a text with
    // ignore comments, whose ranges would not carry from one window to the next, nor one whose
    // name a rule reads (it parses the whole file).
    if (text.length <= LINT_WINDOW || only.has('filter-comments') || NAMED.test(name)) return run(text);
    const messages: SecretLintCoreResultMessage[] = [];
    for (let start = 0; start < text.length;) {
      const end = windowEnd(text, start + LINT_WINDOW);
      // A window reads on past its end, so a finding that starts in it is whole; the next one owns the rest.
      for (const message of await run(text.slice(start, windowEnd(text, end + LINT_OVERLAP)))) {
        const [from, to] = message.range;
        if (start + from < end) messages.push({ ...message, range: [start + from, start + to] });
      }
      start = end;
    }
    return messages;
  };
}

/**
 * Characters secretlint is given at once (its cost grows with the square of a window's findings),
 * and how far each window reads past its end: more than the longest match, a private key's (at
 * most 10 000 characters between its two marker lines).
 */
const LINT_WINDOW = 1 << 15;
const LINT_OVERLAP = 12 << 10;

/**
 * Where a window ends, at `at` or after it: the next line's start, or in a line longer than a
 * window the next word's (no secret holds a space but a named one, whole in the window before).
 */
function windowEnd(text: string, at: number): number {
  if (at >= text.length || text[at - 1] === '\n') return Math.min(at, text.length);
  const ahead = text.slice(at, at + LINT_WINDOW);
  const line = ahead.indexOf('\n');
  if (line >= 0) return at + line + 1;
  const space = ahead.search(/[ \t]/);
  if (space >= 0) return at + space + 1;
  // Never between the two halves of a surrogate pair.
  return (text.charCodeAt(at - 1) & 0xfc00) === 0xd800 ? at + 1 : at;
}

const PREFIX = '@secretlint/secretlint-rule-';
/** Between two texts of a joined check: a line of its own that no rule's match runs through. */
const SEPARATOR = '\n\u0000\n';
/** Names some rule looks at (GCP key files, npm's files): such a text is checked under its own name. */
const NAMED = /\.json$|(^|\/)\.npmrc$/;

type Span = { start: number; end: number; rule: string; kind: string };

/** Findings (and the redacted text when there are any) of each UTF-8 content, in order; `names` are their paths. */
export async function detectSecrets(contents: readonly Uint8Array[], names: readonly string[]): Promise<SecretScan[]> {
  // Decoded only when some rule has to read it.
  const texts: Array<string | undefined> = [];
  const textOf = (i: number): string => {
    const content = contents[i] as Uint8Array;
    return (texts[i] ??= Buffer.from(content.buffer, content.byteOffset, content.byteLength).toString('utf8'));
  };
  const spans: Span[][] = contents.map(() => []);
  const rulesOf = contents.map(rulesAnchoredIn);
  const alone = new Set<number>();
  const joined: number[] = [];
  const joinedRules = new Set<string>();
  rulesOf.forEach((rules, i) => {
    if (rules.size === 0) return;
    if (NAMED.test(names[i] ?? '') || rules.has('filter-comments')) alone.add(i);
    else {
      joined.push(i);
      for (const rule of rules) joinedRules.add(rule);
    }
  });
  if (joined.length + alone.size === 0) return contents.map(() => ({ findings: [] }));
  // secretlint is loaded by the first text that holds an anchor.
  const lint = await (loading ??= loadLinter());
  if (joined.length > 0) {
    const starts: number[] = [];
    let at = 0;
    for (const i of joined) {
      starts.push(at);
      at += textOf(i).length + SEPARATOR.length;
    }
    const all = joined.map(textOf).join(SEPARATOR);
    for (const message of await lint(all, 'content', joinedRules)) {
      const span = spanOf(all, message);
      const first = textAt(starts, span.start);
      const last = textAt(starts, Math.max(span.start, span.end - 1));
      const owner = joined[first] as number;
      const offset = starts[first] as number;
      if (first === last && span.end - offset <= textOf(owner).length)
        spans[owner]?.push({ ...span, start: span.start - offset, end: span.end - offset });
      // Over a separator: every text it touches is checked again on its own.
      else for (let k = first; k <= last; k++) alone.add(joined[k] as number);
    }
  }
  for (const i of alone) {
    const text = textOf(i);
    spans[i] = (await lint(text, basename(names[i] ?? ''), rulesOf[i] as Set<string>)).map((message) =>
      spanOf(text, message),
    );
  }
  return spans.map((list, i) => {
    const found = withoutGenericOverlaps(list);
    if (found.length === 0) return { findings: [] };
    const text = textOf(i);
    return { findings: findingsOf(text, found), redacted: Buffer.from(redact(text, found), 'utf8') };
  });
}

/** The spans, less those of the generic rule that overlap a named service's: one finding per secret, named by the service. */
function withoutGenericOverlaps(spans: Span[]): Span[] {
  const named = spans.filter((span) => span.rule !== HIGH_ENTROPY_RULE_ID).sort((a, b) => a.start - b.start);
  if (named.length === spans.length) return spans;
  // The furthest end of the named spans up to each one, so an overlap is one binary search away.
  const reach: number[] = [];
  for (const span of named) reach.push(Math.max(reach.at(-1) ?? 0, span.end));
  // Of the named spans that start before this one ends, the furthest end must pass its start.
  const overlapsNamed = (span: Span): boolean => {
    const before = countLeading(named.length, (k) => (named[k] as Span).start < span.end);
    return before > 0 && (reach[before - 1] as number) > span.start;
  };
  return spans.filter((span) => span.rule !== HIGH_ENTROPY_RULE_ID || !overlapsNamed(span));
}

/** Which of the joined texts, starting at `starts`, holds position `at`. */
function textAt(starts: readonly number[], at: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((starts[mid] as number) <= at) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

function ruleName(ruleId: string): string {
  return ruleId.startsWith(PREFIX) ? ruleId.slice(PREFIX.length) : ruleId;
}

/**
 * The text a message is about: its range, widened to every place its reported value (the rule's
 * message data) overlaps that range. A rule's range is not always the secret: the AWS rule
 * reports the length of the key from the start of `aws_secret_access_key = …`, which would leave
 * the end of the key in the outputs.
 */
function spanOf(text: string, message: SecretLintCoreResultMessage): Span {
  let [start, end] = message.range;
  const values = Object.values((message.data ?? {}) as Record<string, unknown>).filter(
    (value): value is string => typeof value === 'string' && value.length >= 8,
  );
  // The first place of `value` from `from` that starts before `before`, searched in that stretch
  // only (searching the whole rest of the text for each finding would be quadratic in findings).
  const placeOf = (value: string, from: number, before: number): number => {
    const at = text.slice(from, before + value.length - 1).indexOf(value);
    return at < 0 ? -1 : from + at;
  };
  for (const value of values) {
    for (let at = placeOf(value, Math.max(0, start - value.length), end); at >= 0; at = placeOf(value, at + 1, end)) {
      start = Math.min(start, at);
      end = Math.max(end, at + value.length);
    }
  }
  return { start, end, rule: ruleName(message.ruleId), kind: message.messageId };
}

/** One finding per span, at its start, in text order. */
function findingsOf(text: string, spans: readonly Span[]): SecretFinding[] {
  const sorted = [...spans].sort((a, b) => a.start - b.start);
  const findings: SecretFinding[] = [];
  let line = 1;
  let lineStart = 0;
  for (const span of sorted) {
    for (let at = text.indexOf('\n', lineStart); at >= 0 && at < span.start; at = text.indexOf('\n', lineStart)) {
      line++;
      lineStart = at + 1;
    }
    findings.push({ line, column: span.start - lineStart + 1, rule: span.rule, kind: span.kind });
  }
  return findings;
}

/** The text with each span replaced by its mark; overlapping spans become one, marked with the first rule. */
function redact(text: string, spans: readonly Span[]): string {
  const sorted = [...spans].sort((a, b) => a.start - b.start || b.end - a.end);
  let out = '';
  let at = 0;
  for (const span of sorted) {
    if (span.end <= at) continue;
    if (span.start >= at) out += text.slice(at, span.start) + redactionMark(span.rule);
    at = span.end;
  }
  return out + text.slice(at);
}
