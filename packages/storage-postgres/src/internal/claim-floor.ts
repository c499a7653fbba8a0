/** How long a claim floor stands before claims scan from the start of their index again (clock ms). */
export const FLOOR_MS = 1_000;

/** A position in a claim index: its time column (`created_at`, `next_attempt_at`) and the row id. */
export interface FloorKey {
  at: number;
  id: string;
}

/** Where a claim scans from when there is no floor: before every row. */
export const INDEX_START: FloorKey = { at: -1, id: "" };

/**
 * Where this instance's next claim starts scanning its partial index (`messages_fanout_due_idx`,
 * `deliveries_due_idx`).
 *
 * Claims take the earliest rows first, and every row a claim or an outcome moves out of (or along)
 * the index leaves a dead entry at its front until VACUUM removes it. Every claim would walk all of
 * them: during a backlog drain a fan-out claim grew from about 1 ms to several (4.6 ms after 150,000
 * messages), slower the more it had drained. So after a full batch, the next claim starts where this
 * one stopped: everything before it was dead, done, leased, or locked by another claim. A partial
 * batch (the backlog is drained) or a floor older than `FLOOR_MS` sends the next claim back to the
 * start, so an expired lease, a rolled-back claim, or a row that committed late behind the floor waits
 * at most that long.
 */
export class ClaimFloor {
  #floor: (FloorKey & { setAt: number }) | null = null;

  /** The key to scan from at `now`: the floor, or the start of the index. */
  from(now: number): FloorKey {
    const floor = this.#standing(now);
    return floor === null ? INDEX_START : { at: floor.at, id: floor.id };
  }

  /** Moves the floor after a claim at `now` that returned `claimed` (in index order) of `limit`. */
  after(now: number, claimed: FloorKey[], limit: number): void {
    const last = claimed.at(-1);
    if (last === undefined || claimed.length < limit) this.#floor = null;
    else this.#floor = { at: last.at, id: last.id, setAt: this.#standing(now)?.setAt ?? now };
  }

  #standing(now: number): (FloorKey & { setAt: number }) | null {
    const floor = this.#floor;
    return floor !== null && now >= floor.setAt && now - floor.setAt < FLOOR_MS ? floor : null;
  }
}
