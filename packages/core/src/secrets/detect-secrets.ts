// Secret detection with secretlint's recommended preset, run on a file thread (file-thread.ts):
// the rules are regular expressions over whole texts, CPU the event loop must not spend.
// secretlint is loaded on the first content checked, so a process that never checks (a scan
// with `secrets: off`, the command line's start-up) never pays for its modules.
import { Buffer } from 'node:buffer';
import type { SecretLintCoreConfig, SecretLintCoreResultMessage } from '@secretlint/types';
import { redactionMark } from './secret-scan.js';
import type { SecretFinding, SecretScan } from './secret-scan.js';

type Lint = (text: string) => Promise<SecretLintCoreResultMessage[]>;

let loading: Promise<Lint> | null = null;

async function loadLinter(): Promise<Lint> {
  const [{ lintSource }, { creator }, { secretLintProfiler }] = await Promise.all([
    import('@secretlint/core'),
    import('@secretlint/secretlint-rule-preset-recommend'),
    import('@secretlint/profiler'),
  ]);
  // On by default, it puts several performance marks per file and rule into a buffer nobody empties.
  secretLintProfiler.setEnabled(false);
  const config: SecretLintCoreConfig = {
    rules: [
      {
        id: '@secretlint/secretlint-rule-preset-recommend',
        rule: creator,
        // Access key IDs too (off by default): one names the account and is half of a key pair.
        rules: [{ id: '@secretlint/secretlint-rule-aws', options: { enableIDScanRule: true } }],
      },
    ],
  };
  return async (text) => {
    const result = await lintSource({
      // Not a real path: rules would read the file system, and a message must never name the host's paths.
      source: { filePath: 'content', content: text, contentType: 'text' },
      options: { config, noPhysicFilePath: true },
    });
    return result.messages;
  };
}

const PREFIX = '@secretlint/secretlint-rule-';

/** Findings (and the redacted text when there are any) of each UTF-8 content, in order. */
export async function detectSecrets(contents: readonly Uint8Array[]): Promise<SecretScan[]> {
  loading ??= loadLinter();
  const lint = await loading;
  const scans: SecretScan[] = [];
  for (const content of contents) {
    const text = Buffer.from(content.buffer, content.byteOffset, content.byteLength).toString('utf8');
    const messages = await lint(text);
    if (messages.length === 0) {
      scans.push({ findings: [] });
      continue;
    }
    const spans = messages.map((message) => ({ ...spanOf(text, message), rule: ruleName(message.ruleId) }));
    scans.push({ findings: findingsOf(text, spans, messages), redacted: Buffer.from(redact(text, spans), 'utf8') });
  }
  return scans;
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
function spanOf(text: string, message: SecretLintCoreResultMessage): { start: number; end: number } {
  let [start, end] = message.range;
  const values = Object.values((message.data ?? {}) as Record<string, unknown>).filter(
    (value): value is string => typeof value === 'string' && value.length >= 8,
  );
  for (const value of values) {
    for (
      let at = text.indexOf(value, Math.max(0, start - value.length));
      at >= 0 && at < end;
      at = text.indexOf(value, at + 1)
    ) {
      start = Math.min(start, at);
      end = Math.max(end, at + value.length);
    }
  }
  return { start, end };
}

/** One finding per message, at the start of its span, in text order. */
function findingsOf(
  text: string,
  spans: Array<{ start: number; end: number; rule: string }>,
  messages: SecretLintCoreResultMessage[],
): SecretFinding[] {
  const findings = spans.map((span, i) => {
    const before = text.lastIndexOf('\n', span.start - 1);
    let line = 1;
    for (let at = text.indexOf('\n'); at >= 0 && at < span.start; at = text.indexOf('\n', at + 1)) line++;
    return { at: span.start, line, column: span.start - before, rule: span.rule, kind: messages[i]?.messageId ?? '' };
  });
  findings.sort((a, b) => a.at - b.at);
  return findings.map(({ line, column, rule, kind }) => ({ line, column, rule, kind }));
}

/** The text with each span replaced by its mark; overlapping spans become one, marked with the first rule. */
function redact(text: string, spans: Array<{ start: number; end: number; rule: string }>): string {
  const sorted = [...spans].sort((a, b) => a.start - b.start || b.end - a.end);
  let out = '';
  let at = 0;
  for (const span of sorted) {
    if (span.end <= at) continue;
    if (span.start >= at) {
      out += text.slice(at, span.start) + redactionMark(span.rule);
    }
    at = span.end;
  }
  return out + text.slice(at);
}
