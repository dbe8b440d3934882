/**
 * How many of the indices 0 … count-1, from the first, satisfy `holds`, which is true for a
 * leading run of them and false after it (a sorted array asked "below x?"): a binary search.
 */
export function countLeading(count: number, holds: (index: number) => boolean): number {
  let lo = 0;
  let hi = count;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (holds(mid)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
