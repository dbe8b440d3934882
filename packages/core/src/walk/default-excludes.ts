// Folders that are never part of a repository's own content: version-control data, installed
// dependencies, tool caches and editor state. They are pruned at any depth below the scan root.

export const DEFAULT_EXCLUDED_DIRS: readonly string[] = [
  // version control
  '.git',
  '.hg',
  '.svn',
  '.bzr',
  // dependencies and virtual environments
  'node_modules',
  'bower_components',
  '.venv',
  'venv',
  // tool caches
  '__pycache__',
  '.mypy_cache',
  '.pytest_cache',
  '.ruff_cache',
  '.tox',
  '.gradle',
  '.next',
  '.nuxt',
  // editors
  '.idea',
  '.vscode',
];

/** A folder holding this file is a Python virtual environment, whatever its name. */
export const VIRTUALENV_MARKER = 'pyvenv.cfg';
