let tail: Promise<unknown> = Promise.resolve();

/**
 * Runs `fn` after every write transaction this process started before it, one at a time.
 *
 * libsql's local driver waits for SQLite's lock synchronously (busy_timeout), which blocks the event
 * loop. If two write transactions of one process overlapped, the second would block the very thread
 * the first needs to commit, stalling both until the timeout. Queueing them here instead keeps
 * `BEGIN IMMEDIATE` contention for what it is meant for: other processes. The queue is per process
 * (module scope) because every storage instance may point at the same file.
 */
export function serialiseWrite<T>(fn: () => Promise<T>): Promise<T> {
  const run = tail.then(fn);
  tail = run.catch(() => undefined);
  return run;
}
