import type { PostelInstance, Storage } from "@postel/core";

/** One endpoint's health story, in milliseconds since the demo started. */
export interface EndpointTimeline {
  /** The first failed attempt. */
  firstFailure: number | null;
  /** The breaker opening on a run of failures (the first `circuit-open`). */
  opened: number | null;
  /** Probes that failed while the circuit was open, each re-opening it. */
  failedProbes: number[];
  /** Every auto-disable, with the reason Postel gave. */
  disabled: { at: number; reason: string }[];
}

/**
 * Records, from Postel's events, when a broken endpoint first failed, when its circuit opened, which
 * probes failed and when it was auto-disabled (it is not expected to recover in between).
 */
export function trackEndpoint(
  postel: Pick<PostelInstance<Storage<unknown>>, "on">,
  endpointId: string,
  startedAt: number,
): EndpointTimeline {
  const timeline: EndpointTimeline = { firstFailure: null, opened: null, failedProbes: [], disabled: [] };
  const since = () => Date.now() - startedAt;
  postel.on("attempt", (attempt) => {
    if (attempt.endpointId !== endpointId || attempt.outcome === "success") return;
    timeline.firstFailure ??= attempt.startedAt - startedAt;
  });
  // A failed probe re-opens the circuit, so every `circuit-open` after the first one is a failed probe.
  postel.on("circuit-open", (e) => {
    if (e.endpointId !== endpointId) return;
    if (timeline.opened === null) timeline.opened = since();
    else timeline.failedProbes.push(since());
  });
  postel.on("endpoint-disabled", (e) => {
    if (e.endpointId === endpointId) timeline.disabled.push({ at: since(), reason: e.reason });
  });
  return timeline;
}
