import postgres, { type Sql } from "postgres";
import { reconnectDelay } from "./connection.js";
import { asConnectionError } from "./connection-errors.js";

/** A LISTEN of the storage's, and how to end it. */
export interface WakeListener {
  /** Resolves once the LISTEN took effect (on a primary: a standby refuses LISTEN with 25006). */
  ready: Promise<void>;
  /** Ends its connection; `onLost` is not called for it. */
  stop(): Promise<void>;
}

/**
 * LISTENs on `channel` on one connection of its own, opened like `like` (the storage's pool, or the
 * pool of `listen.url`). postgres.js's own `sql.listen` re-listens by itself after a reconnect and
 * swallows the error if that lands on a standby, so nobody knows wake-ups stopped; here the
 * connection is never reopened behind the caller's back: when it closes, `onLost` is called once and
 * the caller listens again (and meanwhile polls).
 */
export function listenForWakeups(
  like: Sql,
  channel: string,
  onWake: () => void,
  onLost: (error: unknown) => void,
): WakeListener {
  let stopped = false;
  let listening = false;
  const options = like.options;
  const listener = postgres({
    ...(options as unknown as postgres.Options<Record<string, postgres.PostgresType>>),
    // The same choice of host as Postel's own pool: with several hosts, only the primary takes LISTEN.
    ...(options.host.length > 1 ? { target_session_attrs: "primary" as const } : {}),
    backoff: reconnectDelay,
    max: 1,
    idle_timeout: null,
    max_lifetime: null,
    fetch_types: false,
    onnotify: (name: string) => {
      if (name === channel) onWake();
    },
    onclose: () => {
      if (stopped || !listening) return;
      stopped = true;
      void listener.end({ timeout: 0 }).catch(() => {});
      onLost(
        asConnectionError(
          Object.assign(new Error("the LISTEN connection closed"), { code: "CONNECTION_CLOSED" }),
          listener,
        ),
      );
    },
  } as unknown as postgres.Options<Record<string, postgres.PostgresType>>);
  const ready = listener.unsafe(`LISTEN "${channel.replaceAll('"', '""')}"`).then(
    () => {
      listening = true;
    },
    async (error: unknown) => {
      stopped = true;
      await listener.end({ timeout: 0 }).catch(() => {});
      throw asConnectionError(error, listener);
    },
  );
  return {
    ready,
    stop: async () => {
      stopped = true;
      await listener.end({ timeout: 0 }).catch(() => {});
    },
  };
}
