// Fence info strings for syntax highlighting. A fixed table (never derived from the file name
// itself) so an info string can never carry backticks or spaces.
const HINTS: Record<string, string> = {
  ts: 'ts', tsx: 'tsx', mts: 'ts', cts: 'ts', js: 'js', jsx: 'jsx', mjs: 'js', cjs: 'js',
  py: 'python', pyi: 'python', rb: 'ruby', go: 'go', rs: 'rust', java: 'java', kt: 'kotlin', kts: 'kotlin',
  scala: 'scala', swift: 'swift', c: 'c', h: 'c', cc: 'cpp', cpp: 'cpp', cxx: 'cpp', hpp: 'cpp', hh: 'cpp',
  cs: 'csharp', fs: 'fsharp', php: 'php', pl: 'perl', pm: 'perl', r: 'r', lua: 'lua', dart: 'dart',
  ex: 'elixir', exs: 'elixir', erl: 'erlang', hs: 'haskell', ml: 'ocaml', clj: 'clojure', zig: 'zig', nim: 'nim',
  sh: 'bash', bash: 'bash', zsh: 'zsh', fish: 'fish', ps1: 'powershell', bat: 'bat', cmd: 'bat',
  html: 'html', htm: 'html', css: 'css', scss: 'scss', sass: 'sass', less: 'less', vue: 'vue', svelte: 'svelte',
  json: 'json', jsonc: 'jsonc', json5: 'json5', yaml: 'yaml', yml: 'yaml', toml: 'toml', ini: 'ini', xml: 'xml',
  svg: 'xml', sql: 'sql', graphql: 'graphql', gql: 'graphql', proto: 'protobuf', md: 'markdown',
  markdown: 'markdown', rst: 'rst', tex: 'latex', csv: 'csv', tf: 'hcl', hcl: 'hcl', dockerfile: 'dockerfile',
  makefile: 'makefile', cmake: 'cmake', gradle: 'groovy', groovy: 'groovy', diff: 'diff', patch: 'diff',
};

export function languageHint(path: string): string {
  const name = (path.slice(path.lastIndexOf('/') + 1)).toLowerCase();
  if (name === 'dockerfile' || name.startsWith('dockerfile.')) return 'dockerfile';
  if (name === 'makefile' || name === 'gnumakefile') return 'makefile';
  const dot = name.lastIndexOf('.');
  if (dot <= 0) return '';
  return HINTS[name.slice(dot + 1)] ?? '';
}
