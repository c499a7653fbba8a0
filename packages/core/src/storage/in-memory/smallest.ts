/**
 * The `k` smallest items by `compare`, in order, from one pass over `items`: O(n log k) instead of
 * sorting everything, so claiming a batch from a large backlog stays cheap. Ties keep input order.
 */
export function smallest<T>(items: Iterable<T>, k: number, compare: (a: T, b: T) => number): T[] {
  const kept: T[] = [];
  if (k <= 0) return kept;
  for (const item of items) {
    if (kept.length === k && compare(item, kept[k - 1]!) >= 0) continue;
    // Binary search for the first kept element greater than item (after equal ones: stable).
    let low = 0;
    let high = kept.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (compare(kept[mid]!, item) <= 0) low = mid + 1;
      else high = mid;
    }
    kept.splice(low, 0, item);
    if (kept.length > k) kept.pop();
  }
  return kept;
}
