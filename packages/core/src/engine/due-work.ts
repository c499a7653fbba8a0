import type { Clock } from "../clock.js";

/**
 * Whether a busy worker's claim should look for due deliveries (`claimDue`) as well as new messages.
 * That look is a round trip of its own, after fan-out, in every claim that started less than the
 * pool's room: beside a failing endpoint, whose messages' every fan-out leaves a delivery waiting,
 * that was every claim, and the look almost always found nothing.
 *
 * So the worker keeps what it knows: when the work it recorded falls due (a retry, a deferral, a
 * key's next delivery let go unleased), and whether its last look came back full or skipped some
 * endpoints (then more may be there). It looks once something may be due, and at least every
 * `everyMs()` (the idle poll interval) for what it cannot know: another instance's deferrals, a
 * crashed one's expired leases, a replay made elsewhere. An idle worker sleeps until its next
 * expected time when that comes before its next poll.
 */
export class DueWork {
  /** Times at which work this worker knows of falls due, each with when it was learnt. */
  readonly #expected = new MinHeap();
  #learnt = 0;
  /** `#learnt` when the running look began: what was learnt after may not have been visible to it. */
  #lookFrom = 0;
  #lookStart = Number.NEGATIVE_INFINITY;
  #lookedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly clock: Clock,
    private readonly everyMs: () => number,
  ) {}

  /** Whether to look for due work now. */
  worthLooking(): boolean {
    const now = this.clock.now();
    return now - this.#lookedAt >= this.everyMs() || this.#expected.first() <= now;
  }

  /** A look for due work begins. */
  looking(): void {
    this.#lookStart = this.clock.now();
    this.#lookFrom = this.#learnt;
  }

  /**
   * A look ended with `found` of the `asked` deliveries: what was due when it began and known before
   * it is taken. A full one, or one that left some endpoints out (those at their share: their work
   * waits for room), may have left due work behind: the next claim looks again.
   */
  looked(found: number, asked: number, skippedEndpoints: boolean): void {
    const now = this.clock.now();
    this.#lookedAt = now;
    const later: [number, number][] = [];
    while (this.#expected.first() <= this.#lookStart) {
      const entry = this.#expected.pop()!;
      if (entry[1] >= this.#lookFrom) later.push(entry);
    }
    for (const [at, learnt] of later) this.#expected.push(at, learnt);
    if (found >= asked || skippedEndpoints) this.expect(now);
  }

  /** Work falls due in storage at `at` (ms): look for it from then on. */
  expect(at: number): void {
    this.#expected.push(at, this.#learnt++);
  }

  /** How long an idle worker waits before looking again: its poll interval, or less when work falls due sooner. */
  idleMs(pollMs: number): number {
    const wait = this.#expected.first() - this.clock.now();
    return wait > 0 && wait < pollMs ? wait : pollMs;
  }
}

/** A binary min-heap of [time, sequence] pairs, by time. */
class MinHeap {
  readonly #items: [number, number][] = [];

  /** The earliest time, or +Infinity when empty. */
  first(): number {
    return this.#items[0]?.[0] ?? Number.POSITIVE_INFINITY;
  }

  push(at: number, seq: number): void {
    const items = this.#items;
    items.push([at, seq]);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (items[parent]![0] <= at) break;
      [items[parent], items[i]] = [items[i]!, items[parent]!];
      i = parent;
    }
  }

  pop(): [number, number] | undefined {
    const items = this.#items;
    const top = items[0];
    const last = items.pop();
    if (items.length === 0 || last === undefined) return top;
    items[0] = last;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      if (left < items.length && items[left]![0] < items[smallest]![0]) smallest = left;
      if (right < items.length && items[right]![0] < items[smallest]![0]) smallest = right;
      if (smallest === i) break;
      [items[smallest], items[i]] = [items[i]!, items[smallest]!];
      i = smallest;
    }
    return top;
  }
}
