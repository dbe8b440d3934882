// One ordering for the walk, the tree and every artifact: names compared case-insensitively,
// ties broken by code units so the order is total and the same on every host.

export function compareNames(a: string, b: string): number {
  const la = a.toLowerCase();
  const lb = b.toLowerCase();
  if (la !== lb) return la < lb ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}
