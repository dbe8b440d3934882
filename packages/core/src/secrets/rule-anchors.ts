// Which rules could match a text, from one pass over its bytes. Every rule of secretlint's
// recommended preset (and our own high-entropy rule) matches only text holding a fixed anchor —
// a token's prefix (`ghp_`, `xoxb-`), `://` for credentials in URLs, `PRIVATE KEY` — so a rule
// runs only on the texts holding its anchor, and a text holding none is not decoded or checked:
// the preset's 28 regular-expression passes over every text cost several times this one pass.
//
// Each anchor is a part of every match of its rule, copied from the rule's own patterns in the
// pinned preset version; a test checks that every rule of the preset has anchors, so an upgrade
// that adds a rule fails until they are written.
import { Buffer } from 'node:buffer';
import { literalScanner } from './literal-scanner.js';

export interface Anchor {
  /** ASCII, found regardless of case. */
  literal: string;
  /** When set, a hit counts only where this sticky expression matches from the literal's start (the rule's own case or context). */
  confirm?: RegExp;
}

const words = (list: string, confirm?: RegExp): Anchor[] =>
  list.split(' ').map((literal) => (confirm ? { literal, confirm } : { literal }));

/** Wider than both URL rules' user and password: any characters but separators, up to 256 each. */
const CREDENTIAL_IN_URL = /:\/\/[^:/\s]{1,256}:[^@/\s]{1,256}@/y;

/** By rule id without `@secretlint/secretlint-rule-`. */
export const RULE_ANCHORS: Readonly<Record<string, readonly Anchor[]>> = {
  // Key IDs, `…SECRET_ACCESS_KEY = …` and `…ACCOUNT_ID = 1234…`, in the rule's own casings.
  aws: [
    ...words('a3t akia agpa aida aroa aipa anpa anva asia', /A3T|AKIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|ASIA/y),
    { literal: 'secret', confirm: /(?:SECRET|secret|Secret)_?(?:ACCESS|access|Access)/y },
    { literal: 'account', confirm: /(?:ACCOUNT|account|Account)_?(?:ID|id|Id)?["']?\s*(?::|=>|=)/y },
  ],
  // A service account's JSON key file (such a text is checked under its own name, with every rule).
  gcp: words('private_key'),
  // `_authToken=` in a .npmrc, and access tokens: `npm_` and exactly 36 token characters.
  npm: [...words('x-oauth-basic'), ...words('_authToken npm_', /_authToken=|npm_[A-Za-z0-9_]{36}(?![A-Za-z0-9_])/y)],
  // Tokens, and incoming webhooks (which the rule matches regardless of case).
  slack: [...words('xoxb- xoxp- xoxa- xoxo- xoxr- xapp-', /xox[bpaor]-|xapp-/y), ...words('hooks.slack.')],
  // Both URL rules report only a user and a password: `scheme://user:password@`.
  basicauth: words('://', CREDENTIAL_IN_URL),
  openai: words('T3BlbkFJ', /T3BlbkFJ/y),
  anthropic: words('sk-ant-api0', /sk-ant-api0/y),
  groq: words('gsk_', /gsk_/y),
  huggingface: words('hf_', /hf_/y),
  linear: words('lin_api_', /lin_api_/y),
  notion: words('ntn_', /ntn_/y),
  privatekey: [{ literal: 'PRIVATE KEY', confirm: /PRIVATE KEY/y }],
  sendgrid: words('SG.', /SG\./y),
  shopify: words('shppa_ shpca_ shpat_ shpss_', /shp(?:pa|ca|at|ss)_/y),
  stripe: words('sk_live_ sk_test_ rk_live_ rk_test_', /[sr]k_(?:live|test)_/y),
  github: words('ghp_ gho_ ghu_ ghs_ ghr_ github_pat_', /gh[pousr]_|github_pat_/y),
  gitlab: words('glpat-', /glpat-/y),
  grafana: words('glc_ glsa_', /glc_|glsa_/y),
  '1password': words('ops_ey', /ops_ey/y),
  // mongodb://, mysql://, postgres:// in any case.
  'database-connection-string': words('://', CREDENTIAL_IN_URL),
  'hashicorp-vault': words('hvs. hvb. hvr.', /hv[sbr]\./y),
  vercel: words('vcp_ vci_ vca_ vcr_ vck_', /vc[piark]_/y),
  databricks: words('dapi', /dapi/y),
  docker: words('dckr_pat_', /dckr_pat_/y),
  figma: words('figd_', /figd_/y),
  cloudflare: words('cfk_ cfut_ cfat_', /cf(?:k|ut|at)_/y),
  tailscale: words('tskey-', /tskey-/y),
  // Ignore comments: a text holding one is checked on its own, with every rule.
  'filter-comments': words('secretlint-'),
};

/**
 * The text a confirmation reads from a literal's start: more than any of them matches, except the
 * AWS account rule's spacing around its `=`, which the rule does not bound either.
 */
const CONFIRM_WINDOW = 600;

/** A function naming the rules of `anchors` whose anchor occurs in a text's UTF-8 bytes. */
export function anchoredRules(anchors: ReadonlyMap<string, readonly Anchor[]>): (bytes: Uint8Array) => Set<string> {
  const flat = [...anchors].flatMap(([rule, list]) => list.map((anchor) => ({ rule, ...anchor })));
  const scanner = literalScanner(flat.map((anchor) => anchor.literal));
  return (bytes) => {
    const found = new Set<string>();
    scanner.scan(bytes, (index, start) => {
      const anchor = flat[index] as (typeof flat)[number];
      if (found.has(anchor.rule)) return;
      if (anchor.confirm) {
        // Latin-1 keeps byte offsets; every confirmation is ASCII, which UTF-8 spells the same.
        const window = Buffer.from(
          bytes.buffer,
          bytes.byteOffset + start,
          Math.min(CONFIRM_WINDOW, bytes.length - start),
        );
        anchor.confirm.lastIndex = 0;
        if (!anchor.confirm.test(window.toString('latin1'))) return;
      }
      found.add(anchor.rule);
    });
    return found;
  };
}
