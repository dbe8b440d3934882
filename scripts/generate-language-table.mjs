// Generates packages/core/src/classify/language-table.generated.ts from GitHub Linguist's language
// data (the `linguist-languages` devDependency), so the runtime carries a small, pinned table and
// never imports Linguist itself.
//
//   node scripts/generate-language-table.mjs           write the table
//   node scripts/generate-language-table.mjs --check   exit 1 when the committed table is stale
//
// Plain .mjs on purpose: Node 20 cannot run TypeScript and tsx is not installed.
//
// Mapping from Linguist to reposcan's textual subcategories:
//   programming → code, markup → code (HTML, CSS, templates, Vue…), prose → docs, data → data,
//   then the per-language exceptions in LANGUAGE_SUBCATEGORY below: configuration formats (YAML,
//   TOML, INI, .env, ignore files, build recipes such as Dockerfile and Makefile) → config;
//   schema and query languages Linguist files under data (SQL, GraphQL, Protocol Buffers) → code;
//   document-typesetting markup (TeX, Roff, MDX) → docs.
// Filenames follow their language, except that Linguist filenames of JSON/XML (tool configs and
// lockfiles such as .nycrc, composer.lock, Web.config), dotfiles and *rc files (.bashrc, .vimrc,
// .irbrc, even though they are written in a programming language), and the build files listed in
// BUILD_FILENAMES are config.
// An extension claimed by languages with different subcategories gets, in order: the answer in
// EXTENSION_OVERRIDES; else the one its "primary" languages agree on; else the first of
// SUBCATEGORY_PRECEDENCE. Every answer is fixed here, so every host classifies the same way.
/* global console, process, URL */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as linguist from 'linguist-languages';

const OUTPUT = fileURLToPath(new URL('../packages/core/src/classify/language-table.generated.ts', import.meta.url));
const LINGUIST_VERSION = JSON.parse(
  readFileSync(fileURLToPath(new URL('../node_modules/linguist-languages/package.json', import.meta.url)), 'utf8'),
).version;

const TYPE_SUBCATEGORY = { programming: 'code', markup: 'code', prose: 'docs', data: 'data' };

const LANGUAGE_SUBCATEGORY = {
  // Documents, even though Linguist calls them markup.
  'API Blueprint': 'docs',
  BBCode: 'docs',
  Cooklang: 'docs',
  MDX: 'docs',
  mdsvex: 'docs',
  'Rich Text Format': 'docs',
  Roff: 'docs',
  'Roff Manpage': 'docs',
  RUNOFF: 'docs',
  TeX: 'docs',
  // Records rather than documents or programs.
  BibTeX: 'data',
  'Gettext Catalog': 'data',
  // Build recipes: how the project is built and shipped, not the product itself.
  'Alpine Abuild': 'config',
  CMake: 'config',
  Dockerfile: 'config',
  Earthly: 'config',
  Just: 'config',
  Makefile: 'config',
  Meson: 'config',
  Procfile: 'config',
  Singularity: 'config',
  // Configuration formats and tool settings Linguist files under data.
  'Ant Build System': 'config',
  ApacheConf: 'config',
  BIRD2: 'config',
  Browserslist: 'config',
  BuildStream: 'config',
  CODEOWNERS: 'config',
  'Cabal Config': 'config',
  Caddyfile: 'config',
  Cylc: 'config',
  'Debian Package Control File': 'config',
  Dotenv: 'config',
  Easybuild: 'config',
  'Ecere Projects': 'config',
  EditorConfig: 'config',
  GN: 'config',
  'Gemfile.lock': 'config',
  'Git Attributes': 'config',
  'Git Config': 'config',
  'Git Revision List': 'config',
  'Go Checksums': 'config',
  'Go Module': 'config',
  'Go Workspace': 'config',
  Gradle: 'config',
  'Gradle Kotlin DSL': 'config',
  GtkRC: 'config',
  HAProxy: 'config',
  HOCON: 'config',
  'Hosts File': 'config',
  INI: 'config',
  'Ignore List': 'config',
  'JAR Manifest': 'config',
  'JSON with Comments': 'config',
  JSON5: 'config',
  'Java Properties': 'config',
  Kickstart: 'config',
  'Maven POM': 'config',
  'Microsoft Developer Studio Project': 'config',
  'Microsoft Visual Studio Solution': 'config',
  MiniYAML: 'config',
  NEON: 'config',
  'NPM Config': 'config',
  Nginx: 'config',
  Ninja: 'config',
  'OpenStep Property List': 'config',
  'Option List': 'config',
  'Pip Requirements': 'config',
  Proguard: 'config',
  'RPM Spec': 'config',
  'Readline Config': 'config',
  'Redirect Rules': 'config',
  'Robots Exclusion Rules': 'config',
  'SELinux Policy': 'config',
  'SSH Config': 'config',
  'ShellCheck Config': 'config',
  Soong: 'config',
  TOML: 'config',
  'TextMate Properties': 'config',
  'Tor Config': 'config',
  'Wget Config': 'config',
  XCompose: 'config',
  'XML Property List': 'config',
  YAML: 'config',
  'cURL Config': 'config',
  crontab: 'config',
  desktop: 'config',
  dircolors: 'config',
  nanorc: 'config',
  'pkg-config': 'config',
  // Schemas, grammars, IDLs and query languages: written and reviewed like code.
  ABNF: 'code',
  'ASN.1': 'code',
  'Avro IDL': 'code',
  CIL: 'code',
  'Cloud Firestore Security Rules': 'code',
  EBNF: 'code',
  FlatBuffers: 'code',
  GraphQL: 'code',
  'Graphviz (DOT)': 'code',
  Kusto: 'code',
  Lark: 'code',
  PlantUML: 'code',
  Prisma: 'code',
  'Protocol Buffer': 'code',
  RBS: 'code',
  'ROS Interface': 'code',
  'Regular Expression': 'code',
  SPARQL: 'code',
  SQL: 'code',
  'SpiceDB Schema': 'code',
  'Type Language': 'code',
  'Vespa Schema Definition': 'code',
  'WebAssembly Interface Type': 'code',
  YANG: 'code',
  Zmodel: 'code',
};

// Build files: the files a build tool, package manager or CI service reads by their fixed name
// (build scripts, manifests, lockfiles, pipelines). They are config whatever language they are
// written in: a Rakefile is as much config as a Makefile. Each is a Linguist filename or a name
// whose extension Linguist lists (`build.sbt`, `mix.exs`, `Package.swift`), so a typo fails the
// generator. Languages that exist only to build (Makefile, CMake, Meson, Dockerfile, Gradle…) are
// config as a whole through LANGUAGE_SUBCATEGORY above.
const BUILD_FILENAMES = [
  'APKBUILD',
  'Appraisals',
  'BUCK',
  'BUILD',
  'BUILD.bazel',
  'Berksfile',
  'Brewfile',
  'Buildfile',
  'Cakefile',
  'Capfile',
  'Cask',
  'DEPS',
  'Dangerfile',
  'Deliverfile',
  'Eask',
  'Emakefile',
  'Fakefile',
  'Fastfile',
  'Gemfile',
  'Gruntfile.coffee',
  'Gruntfile.js',
  'Guardfile',
  'Jakefile',
  'Jarfile',
  'Jenkinsfile',
  'MODULE.bazel',
  'Makefile.PL',
  'Mavenfile',
  'Modulefile',
  'Nukefile',
  'PKGBUILD',
  'Package.swift',
  'Phakefile',
  'Podfile',
  'Puppetfile',
  'Rakefile',
  'Rexfile',
  'SConscript',
  'SConstruct',
  'Slakefile',
  'Snapfile',
  'Steepfile',
  'Thorfile',
  'Tiltfile',
  'Vagrantfile',
  'WORKSPACE',
  'WORKSPACE.bazel',
  'WORKSPACE.bzlmod',
  'build.rs',
  'build.sbt',
  'build.zig',
  'buildfile',
  'conanfile.py',
  'configure.ac',
  'cpanfile',
  'dune-project',
  'gulpfile.js',
  'kcl.mod',
  'kcl.mod.lock',
  'm3makefile',
  'm3overrides',
  'mix.exs',
  'mix.lock',
  'nextflow.config',
  'nim.cfg',
  'project.clj',
  'project.godot',
  'rebar.config',
  'rebar.config.lock',
  'rebar.lock',
  'riemann.config',
  'setup.py',
  'wscript',
  'xmake.lua',
];

// Generic data formats whose Linguist filenames are all tool configs or lockfiles.
const CONFIG_FILENAME_LANGUAGES = new Set(['JSON', 'XML']);

const EXTENSION_OVERRIDES = {
  // The answers the product promises (docs/api.md, what is scanned), pinned even where Linguist already agrees.
  '.ts': 'code', // TypeScript, never an MPEG transport stream or Qt translation file
  '.h': 'code',
  '.m': 'code',
  '.pl': 'code',
  '.json': 'data',
  '.md': 'docs',
  '.txt': 'docs',
  '.yaml': 'config',
  '.yml': 'config',
  // Ambiguous in Linguist; the common meaning in repositories wins.
  '.asc': 'data', // ASCII-armoured keys and signatures
  '.for': 'code', // Fortran
  '.srt': 'data', // SubRip subtitles
  '.svx': 'docs', // mdsvex
  // MSBuild, Visual Studio, NuGet, IntelliJ and similar project files: XML that configures a build.
  '.ccproj': 'config',
  '.cscfg': 'config',
  '.csdef': 'config',
  '.csproj': 'config',
  '.depproj': 'config',
  '.dll.config': 'config',
  '.dotsettings': 'config',
  '.filters': 'config',
  '.fsproj': 'config',
  '.iml': 'config',
  '.ivy': 'config',
  '.jsproj': 'config',
  '.launch': 'config',
  '.ndproj': 'config',
  '.nproj': 'config',
  '.nuspec': 'config',
  '.pkgproj': 'config',
  '.proj': 'config',
  '.props': 'config',
  '.pubxml': 'config',
  '.sfproj': 'config',
  '.shproj': 'config',
  '.slnx': 'config',
  '.targets': 'config',
  '.vbproj': 'config',
  '.vcxproj': 'config',
  '.vsixmanifest': 'config',
  '.vssettings': 'config',
  '.wixproj': 'config',
  '.xml.dist': 'config',
  '.xproj': 'config',
};

const SUBCATEGORY_PRECEDENCE = ['code', 'config', 'data', 'docs'];

function languageSubcategory(language) {
  const subcategory = LANGUAGE_SUBCATEGORY[language.name] ?? TYPE_SUBCATEGORY[language.type];
  if (!subcategory) throw new Error(`Unknown Linguist type "${language.type}" for ${language.name}`);
  return subcategory;
}

function filenameSubcategory(language, filename) {
  if (BUILD_FILENAMES.includes(filename) || CONFIG_FILENAME_LANGUAGES.has(language.name)) return 'config';
  if (/^[._]|rc$/i.test(filename)) return 'config';
  return languageSubcategory(language);
}

/** Picks one subcategory from the claims of several languages on the same name. */
function resolve(claims) {
  const distinct = (list) => [...new Set(list.map((c) => c.subcategory))];
  const all = distinct(claims);
  if (all.length === 1) return all[0];
  const primary = distinct(claims.filter((c) => c.primary));
  if (primary.length === 1) return primary[0];
  const pool = primary.length > 0 ? primary : all;
  return SUBCATEGORY_PRECEDENCE.find((s) => pool.includes(s));
}

// Names that no longer match Linguist would silently stop applying after an upgrade.
function checkNames() {
  const languages = new Set(Object.keys(linguist));
  const filenames = new Set(Object.values(linguist).flatMap((l) => l.filenames ?? []));
  const extensions = new Set(Object.values(linguist).flatMap((l) => l.extensions ?? []));
  const known = (name) => filenames.has(name) || extensions.has(name.slice(name.lastIndexOf('.')));
  const missing = [
    ...Object.keys(LANGUAGE_SUBCATEGORY).filter((name) => !languages.has(name)),
    ...BUILD_FILENAMES.filter((name) => !known(name)),
    ...[...CONFIG_FILENAME_LANGUAGES].filter((name) => !languages.has(name)),
  ];
  if (missing.length > 0) throw new Error(`Not in Linguist ${LINGUIST_VERSION}: ${missing.join(', ')}`);
}

function buildTables() {
  checkNames();
  const extensionClaims = new Map();
  const filenameClaims = new Map();
  const claim = (map, key, value) => {
    const list = map.get(key) ?? [];
    list.push(value);
    map.set(key, list);
  };
  for (const language of Object.values(linguist)) {
    (language.extensions ?? []).forEach((ext, index) => {
      claim(extensionClaims, ext.toLowerCase(), { subcategory: languageSubcategory(language), primary: index === 0 });
    });
    for (const filename of language.filenames ?? []) {
      claim(filenameClaims, filename.toLowerCase(), {
        subcategory: filenameSubcategory(language, filename),
        primary: true,
      });
    }
  }
  // Build files Linguist knows only by their extension are added by name.
  for (const filename of BUILD_FILENAMES) {
    if (!filenameClaims.has(filename.toLowerCase()))
      claim(filenameClaims, filename.toLowerCase(), { subcategory: 'config', primary: true });
  }
  for (const [ext, subcategory] of Object.entries(EXTENSION_OVERRIDES)) {
    if (!extensionClaims.has(ext)) throw new Error(`Override for ${ext}, which Linguist does not list`);
    extensionClaims.set(ext, [{ subcategory, primary: true }]);
  }
  const group = (claims) => {
    const bySubcategory = {};
    for (const key of [...claims.keys()].sort()) (bySubcategory[resolve(claims.get(key))] ??= []).push(key);
    return bySubcategory;
  };
  return { extensions: group(extensionClaims), filenames: group(filenameClaims) };
}

function renderList(names) {
  const lines = [];
  let line = '   ';
  for (const name of names) {
    const item = ` ${JSON.stringify(name)},`;
    if (line.length + item.length > 110) {
      lines.push(line);
      line = '   ';
    }
    line += item;
  }
  lines.push(line);
  return lines.join('\n');
}

function renderGroups(groups) {
  return SUBCATEGORY_PRECEDENCE.filter((s) => groups[s])
    .map((s) => `  ${s}: [\n${renderList(groups[s])}\n  ],`)
    .join('\n');
}

function render({ extensions, filenames }) {
  return `// GENERATED FILE: do not edit by hand.
// Source: linguist-languages@${LINGUIST_VERSION} (GitHub Linguist's language data).
// Regenerate from the repository root: node scripts/generate-language-table.mjs
// The Linguist → subcategory mapping and its exceptions live in that script.
import type { TextSubcategory } from '../types.js';

type NamesBySubcategory = Readonly<Partial<Record<TextSubcategory, readonly string[]>>>;

/** Lower-case extensions, with the leading dot (compound ones such as \`.cmake.in\` included). */
export const LINGUIST_EXTENSIONS: NamesBySubcategory = {
${renderGroups(extensions)}
};

/** Lower-case exact file names. */
export const LINGUIST_FILENAMES: NamesBySubcategory = {
${renderGroups(filenames)}
};
`;
}

const output = render(buildTables());
if (process.argv.includes('--check')) {
  let current = '';
  try {
    current = readFileSync(OUTPUT, 'utf8');
  } catch {
    // A missing table is stale.
  }
  if (current !== output) {
    console.error(`${OUTPUT} is stale: run node scripts/generate-language-table.mjs`);
    process.exit(1);
  }
  console.log('language table is up to date');
} else {
  writeFileSync(OUTPUT, output);
  console.log(`wrote ${OUTPUT}`);
}
