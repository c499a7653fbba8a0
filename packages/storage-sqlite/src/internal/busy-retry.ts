/**
 * How long SQLite itself may wait for a lock (`busy_timeout`) on connections SqliteStorage opens.
 * libsql's local driver waits synchronously, blocking the event loop, so this stays short; the rest
 * of `busyTimeoutMs` is waited asynchronously by `retryWhileBusy`, letting this process's own open
 * transactions (a `send(event, { tx })` in progress) commit meanwhile.
 */
export const SYNC_BUSY_WAIT_MS = 25;

const MAX_DELAY_MS = 50;

/** True for SQLITE_BUSY (and its extended codes): another connection holds the write lock. */
export function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && code.startsWith("SQLITE_BUSY");
}

/**
 * Run `attempt` (one whole write transaction) again while it fails with SQLITE_BUSY, backing off
 * asynchronously, until `budgetMs` has passed; then the last SQLITE_BUSY is thrown. A write
 * transaction that failed busy wrote nothing, so retrying it is safe.
 */
export async function retryWhileBusy<T>(attempt: () => Promise<T>, budgetMs: number): Promise<T> {
  // Lock waiting is infrastructure, not domain time: it uses the real clock, never core's Clock.
  const deadline = Date.now() + budgetMs;
  for (let delay = 1; ; delay = Math.min(delay * 2, MAX_DELAY_MS)) {
    try {
      return await attempt();
    } catch (error) {
      if (!isBusy(error) || Date.now() + delay > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}
