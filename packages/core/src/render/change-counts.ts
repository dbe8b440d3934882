/**
 * A change digest's counts as its outputs write them, and the web page shows them (bundled into
 * its core-format.js): `2 added, 1 modified, 0 renamed, 1 deleted (0 binary)`.
 */
export function changeCountsLine(counts: {
  added: number;
  modified: number;
  renamed: number;
  deleted: number;
  binary: number;
}): string {
  return `${counts.added} added, ${counts.modified} modified, ${counts.renamed} renamed, ${counts.deleted} deleted (${counts.binary} binary)`;
}
