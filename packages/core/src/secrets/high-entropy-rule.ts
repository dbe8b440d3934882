// A secretlint rule for credentials of no known service: a random-looking value given to a name
// that says it is a secret (`DB_PASSWORD=…`, `"client_secret": "…"`, `apiKey: '…'`). secretlint's
// preset only knows services by their tokens' prefixes, and no maintained JavaScript library checks
// entropy; this follows detect-secrets' keyword and high-entropy detectors, combined: a value is
// reported only when both hold, which keeps identifiers and words (no digits, or too regular) out.
import type { SecretLintRuleCreator, SecretLintSourceCode } from '@secretlint/types';
import type { Anchor } from './rule-anchors.js';

export const HIGH_ENTROPY_RULE_ID = 'high-entropy';

/** Names that say their value is a secret, matched regardless of case. */
const SECRET_NAME = String.raw`(?:pass(?:word|wd|phrase)?|secret|token|api[_-]?key|access[_-]?key|credential)`;

/** A name ending in identifier characters, then a separator: what every match starts with. */
const NAME_AND_SEPARATOR = String.raw`${SECRET_NAME}[A-Za-z0-9_.-]{0,64}["']?[ \t]{0,16}(?::=|=>|:|=)[ \t]{0,16}`;

const VALUE = String.raw`[A-Za-z0-9+/=_.~-]{16,200}`;

/**
 * The name, its separator and a value of 16 to 200 token characters: quoted, or unquoted up to
 * the end of its line (`.env`, `.ini`, YAML), so code (`token = nextToken2(…)`) is not a value.
 */
const ASSIGNMENT = new RegExp(
  String.raw`${NAME_AND_SEPARATOR}(?:(["'\x60])(${VALUE})\1|(${VALUE})[ \t]*(?:#|\r?$))`,
  'gim',
);

/** The rule's anchors (rule-anchors.ts): each keyword, confirmed by an assignment's shape (the closing quote aside). */
export const HIGH_ENTROPY_ANCHORS: readonly Anchor[] = [
  'pass',
  'secret',
  'token',
  'api_key',
  'api-key',
  'apikey',
  'access_key',
  'access-key',
  'accesskey',
  'credential',
].map((literal) => ({
  literal,
  confirm: new RegExp(String.raw`${NAME_AND_SEPARATOR}(?:["'\x60]${VALUE}|${VALUE}[ \t]*(?:#|\r?$))`, 'imy'),
}));

/** Bits per character a value must reach: random base64 of 16+ characters sits around 3.8–4.5, words and identifiers under 3.5. */
const MIN_ENTROPY = 3.5;

function entropy(value: string): number {
  const counts = new Map<string, number>();
  for (const c of value) counts.set(c, (counts.get(c) ?? 0) + 1);
  let bits = 0;
  for (const n of counts.values()) bits -= (n / value.length) * Math.log2(n / value.length);
  return bits;
}

/** Two digits or more and letters: words and identifiers rarely hold two digits. */
function looksRandom(value: string): boolean {
  return /[0-9].*[0-9]/.test(value) && /[A-Za-z]/.test(value) && entropy(value) >= MIN_ENTROPY;
}

const messages = {
  // No value in the message: the engine widens a finding to where its message's values occur.
  HighEntropySecret: { en: () => 'found a random-looking value given to a name that says it is secret' },
};

export const highEntropyRule: SecretLintRuleCreator = {
  messages,
  meta: {
    id: HIGH_ENTROPY_RULE_ID,
    recommended: true,
    type: 'scanner',
    supportedContentTypes: ['text'],
    docs: { url: 'https://github.com/Yelp/detect-secrets#viewing-all-enabled-plugins' },
  },
  create(context) {
    const t = context.createTranslator(messages);
    return {
      file(source: SecretLintSourceCode) {
        for (const match of source.content.matchAll(ASSIGNMENT)) {
          const value = (match[2] ?? match[3]) as string;
          if (!looksRandom(value)) continue;
          const start = (match.index ?? 0) + match[0].indexOf(value, match[0].length - value.length - 220);
          context.report({ message: t('HighEntropySecret'), range: [start, start + value.length] });
        }
      },
    };
  },
};
