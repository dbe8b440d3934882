/**
 * The ignore files the walk reads in every folder, in the order they apply: `.gittxtignore` lines
 * come last, so they win. A clone that leaves files on the server still checks these out.
 */
export const IGNORE_FILE_NAMES: readonly string[] = ['.gitignore', '.gittxtignore'];
