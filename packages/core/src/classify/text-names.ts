// Hand-kept name knowledge that Linguist's data lacks or that needs a pattern. The generated
// table covers languages; these rules cover conventions (manifests, lockfiles, `*rc` files,
// README-style documents). All keys and patterns are lower-case: names match case-insensitively.
import type { TextSubcategory } from '../types.js';

/** Exact basenames; they win over everything else. */
export const TEXT_FILENAMES: ReadonlyMap<string, TextSubcategory> = new Map([
  // Package manifests and workspace settings.
  ['angular.json', 'config'],
  ['bower.json', 'config'],
  ['composer.json', 'config'],
  ['deno.json', 'config'],
  ['firebase.json', 'config'],
  ['lerna.json', 'config'],
  ['nx.json', 'config'],
  ['package.json', 'config'],
  ['renovate.json', 'config'],
  ['turbo.json', 'config'],
  ['vercel.json', 'config'],
  // Lockfiles Linguist does not list (the `.lock` extension covers most others).
  ['npm-shrinkwrap.json', 'config'],
  ['package-lock.json', 'config'],
  // Tool version pins.
  ['.node-version', 'config'],
  ['.python-version', 'config'],
  ['.ruby-version', 'config'],
  ['.terraform-version', 'config'],
  ['.tool-versions', 'config'],
]);

/** Whole-name patterns that beat the extension (`.eslintrc.cjs` is config, not code). */
export const LEADING_NAME_RULES: readonly (readonly [RegExp, TextSubcategory])[] = [
  [/^\.env(\.|$)/, 'config'], // .env, .env.local, .env.production.local
  [/^\.[^.]*rc(\.|$)/, 'config'], // .npmrc, .eslintrc.cjs, .prettierrc.yaml, .mocharc.yml
  [/^\.[^.]*ignore$/, 'config'], // .helmignore, .gcloudignore
  [/^[jt]sconfig(\..+)?\.json$/, 'config'], // tsconfig.json, tsconfig.build.json
  [/\.config\.([cm]?[jt]s|json)$/, 'config'], // vite.config.ts, eslint.config.mjs, app.config.json
  [/^requirements([-_.].*)?\.(txt|in)$/, 'config'], // requirements-test.txt, requirements.in
];

/** Extensions Linguist does not list. */
export const TEXT_EXTENSIONS: ReadonlyMap<string, TextSubcategory> = new Map([
  ['.conf', 'config'],
  ['.lock', 'config'],
  ['.crt', 'data'],
  ['.csr', 'data'],
  ['.key', 'data'], // PEM private keys; Keynote decks are zip bundles and fail the content check
  ['.log', 'data'],
  ['.map', 'data'], // source maps
  ['.ndjson', 'data'],
  ['.pem', 'data'],
  ['.tsbuildinfo', 'data'],
  ['.license', 'docs'], // REUSE sidecar files: `logo.png.license`
]);

/** Patterns consulted only when no extension matched (`LICENSE-MIT`, `THIRD-PARTY-NOTICES`, `Dockerfile.dev`). */
export const FALLBACK_NAME_RULES: readonly (readonly [RegExp, TextSubcategory])[] = [
  [
    /^(third[-_]party[-_])?(authors|changelog|changes|citation|code_of_conduct|contributing|contributors|copying|copyright|credits|governance|history|install|licen[cs]es?|maintainers|news|notices?|patents|readme|security|support|thanks)([-_.]|$)/,
    'docs',
  ],
  [/^(containerfile|dockerfile|gnumakefile|jenkinsfile|makefile)([-_.]|$)/, 'config'],
];

/**
 * Suffixes of templates and samples (`config.yml.example`, `config.h.in`): when nothing else
 * matched, the name without the suffix decides.
 */
export const TEMPLATE_SUFFIXES: readonly string[] = ['.dist', '.example', '.in', '.sample', '.template'];
