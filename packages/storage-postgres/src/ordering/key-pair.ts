/**
 * The (endpoint, ordering key) pair of the row `alias` as the one value `deliveries_key_open_idx` is
 * keyed by: an endpoint id has no space, so the pair reads back unambiguously. Written exactly as the
 * index's expression, so the planner matches it; no other index can serve it, whatever a generic plan
 * made on an unanalysed table estimates.
 */
export function keyPair(alias: string): string {
  return `((${alias}.endpoint_id || ' ' || ${alias}.ordering_key) COLLATE "C")`;
}
