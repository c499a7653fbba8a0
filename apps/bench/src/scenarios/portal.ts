import { Postel, SEARCH_WINDOW } from "@postel/core";
import type { Portal } from "@postel/portal";
import { PostgresStorage } from "@postel/storage-postgres";
import postgres from "postgres";
import { createBenchDatabase } from "../database.js";
import type { Scenario, ScenarioContext } from "../scenario.js";
import { formatNumber, type Metric, median, percentile } from "../stats.js";
import { EMPTY_TENANT, HEAVY_TENANT, seedTenantHistory, type TenantHistory } from "../tenant-history.js";
import { DAY } from "./dashboard.js";

/** Pages followed through `nextCursor` before the deep page is timed. */
const DEEP_PAGES = 20;
/** The portal's page size (`tenantScope`). */
const PAGE_SIZE = 50;
const WARM_UPS = 3;
const TARGET_MS = 100;
const BASE = "/portal";

/** One request to time as one tenant, built from the seeded ids. */
interface PortalRequest {
  name: string;
  method: "GET" | "POST";
  path: string;
  body?: Record<string, unknown>;
  tenant: string;
  /** An HTML page, maybe not built yet: a 404 shows as "not built" instead of failing the run. */
  page?: boolean;
  /** Why it is not timed for this tenant (it has no message to open). */
  skip?: string;
}

/**
 * Server time per portal page and JSON API route beside a month of history (issue 27: ≤ 100 ms
 * p95 with 1,000,000 messages over 10,000 tenants), for the tenant with the most messages and one
 * with none: the handler is called in this process, `portal(new Request(...))`, one request at a
 * time, each timed until its body is read. Also how many pages a tenant's first 50 messages take,
 * a listing by tenant examining `SEARCH_WINDOW` messages per page.
 */
export const portal: Scenario = {
  name: "portal",
  storage: "postgres",
  description:
    "portal server time per page and API route, the tenant with the most messages and one with none, beside 1,000,000 messages over 10,000 tenants (p95 ≤ 100 ms)",
  async run(context) {
    const { scale, log } = context;
    const database = await createBenchDatabase();
    // The application's pool, as an app mounting the portal would share it.
    const pool = postgres(database.url, { max: 10, onnotice: () => {} });
    try {
      const started = Date.now();
      const history = await seedTenantHistory(database, scale.historyRows, log);
      log(
        `  seeded ${scale.historyRows.toLocaleString("en-US")} messages over 30 days and ${history.tenants.toLocaleString("en-US")} tenants (+ ${EMPTY_TENANT}), with their deliveries and attempts, in ${Math.round((Date.now() - started) / 1000)} s`,
      );
      const postel = Postel({ outbound: { storage: PostgresStorage({ sql: pool }, { migrate: false }) } });
      // Loaded here, not at the top: main.ts imports every scenario, and under --baseline a commit's
      // own @postel/portal (older, or absent) must not stop the scenarios that never use it.
      const { createPortal } = await import("@postel/portal");
      const handler = createPortal({
        postel,
        basePath: BASE,
        authenticate: (request) => ({ tenantId: request.headers.get("x-bench-tenant")!, actor: "bench" }),
      });
      const requests = [
        ...(await requestsFor(handler, HEAVY_TENANT, history)),
        ...(await requestsFor(handler, EMPTY_TENANT, history)),
      ];
      const metrics = await timeRequests(context, handler, requests);
      for (const tenant of [HEAVY_TENANT, history.typicalTenant, EMPTY_TENANT]) {
        metrics.push(await firstPageFill(handler, tenant, log));
      }
      return metrics;
    } finally {
      await pool.end({ timeout: 5 });
      await database.drop();
    }
  },
};

/**
 * Every GET route of the JSON API, page 21 of the messages, recover's dry run and the HTML pages
 * (issue 27's five and any other of `PAGE_ROUTES`), as `tenant`, with that tenant's ids. A GET route
 * added to the API or the pages is timed too, and fails the run when it needs an id this cannot give.
 */
async function requestsFor(
  handler: Portal,
  tenant: string,
  history: TenantHistory,
): Promise<PortalRequest[]> {
  const endpoint = history.endpointIds[tenant]![0]!;
  const idOf = {
    endpoints: endpoint,
    messages: tenant === HEAVY_TENANT ? history.heavyMessageId : undefined,
  };
  const { API_ROUTES, PAGE_ROUTES } = await import("@postel/portal");
  const requests: PortalRequest[] = [];
  for (const route of API_ROUTES.filter((r) => r.startsWith("GET "))) {
    requests.push({ name: route, method: "GET", tenant, ...withId(`${BASE}/api/`, route.slice(4), idOf) });
    if (route === "GET messages") requests.push(await deepPage(handler, tenant));
  }
  requests.push({
    name: "POST endpoints/:id/recover (dry run)",
    method: "POST",
    path: `${BASE}/api/endpoints/${endpoint}/recover`,
    body: { since: new Date(Date.now() - 30 * DAY).toISOString(), dryRun: true },
    tenant,
  });
  const pages = ["/", "/endpoints", "/endpoints/:id", "/messages", "/messages/:id"];
  for (const route of PAGE_ROUTES) {
    if (route.startsWith("GET ") && !pages.includes(route.slice(4))) pages.push(route.slice(4));
  }
  for (const shape of pages) {
    requests.push({ name: `page ${shape}`, method: "GET", tenant, page: true, ...withId(BASE, shape, idOf) });
  }
  return requests;
}

/**
 * The path of route `shape` below `prefix` with its `:id` filled by its first segment's resource, or
 * why it cannot be timed for this tenant (it has no message to open).
 */
function withId(
  prefix: string,
  shape: string,
  idOf: Record<string, string | undefined>,
): { path: string; skip?: string } {
  const segments = shape.split("/");
  const resource = segments.find((segment) => segment !== "") ?? "";
  const ids = segments.filter((segment) => segment === ":id").length;
  if (ids === 0) return { path: `${prefix}${shape}` };
  if (ids > 1 || !(resource in idOf))
    throw new Error(`portal: no seeded id for ${shape}; add one to requestsFor`);
  const id = idOf[resource];
  if (id === undefined) return { path: "", skip: `no ${resource}` };
  return { path: `${prefix}${shape.replace(":id", encodeURIComponent(id))}` };
}

/** One page of `GET messages` as `tenant`: its message ids and its `nextCursor`. */
async function messagesPage(
  handler: Portal,
  tenant: string,
  cursor: string | undefined,
): Promise<{ ids: string[]; nextCursor: string | null }> {
  const query = cursor === undefined ? "" : `?${new URLSearchParams({ cursor })}`;
  const request = {
    name: "GET messages",
    method: "GET",
    path: `${BASE}/api/messages${query}`,
    tenant,
  } as const;
  const response = await handler(toRequest(request));
  const body = await response.text();
  if (response.status !== 200)
    throw new Error(`${tenant} GET messages${query} answered ${response.status}: ${body}`);
  const page = JSON.parse(body) as { items: { id: string }[]; nextCursor: string | null };
  return { ids: page.items.map((item) => item.id), nextCursor: page.nextCursor };
}

/** `GET messages` at page 21, reached through the API by following `nextCursor` 20 times. */
async function deepPage(handler: Portal, tenant: string): Promise<PortalRequest> {
  const name = `GET messages, page ${DEEP_PAGES + 1} by cursor`;
  let cursor: string | undefined;
  let previous: string | undefined;
  for (let n = 0; n < DEEP_PAGES; n++) {
    const page = await messagesPage(handler, tenant, cursor);
    if (page.ids[0] !== undefined && page.ids[0] === previous)
      throw new Error(
        `${tenant} GET messages?cursor= answered the same page again: the API does not read cursor`,
      );
    previous = page.ids[0] ?? previous;
    cursor = page.nextCursor ?? undefined;
    if (cursor === undefined)
      return { name, method: "GET", path: "", tenant, skip: `no page ${DEEP_PAGES + 1}` };
  }
  return {
    name,
    method: "GET",
    path: `${BASE}/api/messages?${new URLSearchParams({ cursor: cursor! })}`,
    tenant,
  };
}

/** Times each request `samples` times per run (after warm-ups) and returns its p95 (p50). */
async function timeRequests(
  { scale, log }: ScenarioContext,
  handler: Portal,
  requests: PortalRequest[],
): Promise<Metric[]> {
  const samples = scale.quick ? 10 : 50;
  const p50: number[][] = requests.map(() => []);
  const p95: number[][] = requests.map(() => []);
  // What the first answer showed instead of a time: not built, or a cursor the API does not read.
  const untimed: (string | null)[] = [];
  for (const request of requests) untimed.push(await check(handler, request));
  for (let run = 1; run <= scale.runs; run++) {
    for (const [i, request] of requests.entries()) {
      if (untimed[i] !== null) continue;
      for (let n = 0; n < WARM_UPS; n++) await timeOne(handler, request);
      const times: number[] = [];
      for (let n = 0; n < samples; n++) times.push(await timeOne(handler, request));
      p50[i]!.push(percentile(times, 50));
      p95[i]!.push(percentile(times, 95));
      log(
        `  run ${run}/${scale.runs} ${request.tenant} ${request.name}: p50 ${p50[i]!.at(-1)!.toFixed(1)} ms, p95 ${p95[i]!.at(-1)!.toFixed(1)} ms`,
      );
    }
  }
  return requests.map((request, i) => {
    const name = `${request.tenant} ${request.name}: p95 (p50)`;
    const shown = untimed[i] ?? null;
    if (shown !== null)
      return { scenario: "portal", name, unit: "ms", postel: Number.NaN, display: shown, postelRuns: [] };
    const value = median(p95[i]!);
    return {
      scenario: "portal",
      name,
      unit: "ms",
      postel: value,
      display: `${formatNumber(value)} (${formatNumber(median(p50[i]!))})`,
      postelRuns: p95[i]!,
      target: { op: "<=", value: TARGET_MS },
    } satisfies Metric;
  });
}

/**
 * The first answer to `request`, before any timing: null to time it, or what the table shows
 * instead. A page's 404 is "not built" and its redirect shows where it leads (the endpoints list is
 * the portal's home, so `/endpoints` sends to `/`); any other answer but a 2xx fails the run.
 */
async function check(handler: Portal, request: PortalRequest): Promise<string | null> {
  if (request.skip !== undefined) return `— (${request.skip})`;
  const response = await handler(toRequest(request));
  const body = await response.text();
  if (response.status === 404 && request.page) return "not built";
  const location = response.headers.get("location");
  if (response.status >= 300 && response.status <= 399 && request.page && location !== null)
    return `${response.status} to ${new URL(location, "http://bench.local").pathname}`;
  if (response.status < 200 || response.status > 299)
    throw new Error(
      `${request.tenant} ${request.name} (${request.method} ${request.path}) answered ${response.status}: ${body.slice(0, 300)}`,
    );
  return null;
}

/** Server time of one request, until its body is read; anything but a 2xx fails the run. */
async function timeOne(handler: Portal, request: PortalRequest): Promise<number> {
  const started = performance.now();
  const response = await handler(toRequest(request));
  const body = await response.text();
  const ms = performance.now() - started;
  if (response.status < 200 || response.status > 299) {
    throw new Error(`${request.tenant} ${request.name} answered ${response.status}: ${body.slice(0, 300)}`);
  }
  return ms;
}

function toRequest(request: PortalRequest): Request {
  const json = request.body !== undefined;
  return new Request(`http://bench.local${request.path}`, {
    method: request.method,
    headers: { "x-bench-tenant": request.tenant, ...(json ? { "content-type": "application/json" } : {}) },
    ...(json ? { body: JSON.stringify(request.body) } : {}),
  });
}

/**
 * How a tenant's messages fill the portal's first page: a listing by tenant examines
 * `SEARCH_WINDOW` messages per page, so a tenant with a small share gets a short page and a cursor.
 * Follows the API's `nextCursor` until 50 items or the end.
 */
async function firstPageFill(handler: Portal, tenant: string, log: (line: string) => void): Promise<Metric> {
  const fill = async () => {
    const started = performance.now();
    let cursor: string | undefined;
    const counts: number[] = [];
    do {
      const page = await messagesPage(handler, tenant, cursor);
      counts.push(page.ids.length);
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined && counts.reduce((a, b) => a + b, 0) < PAGE_SIZE);
    return { counts, ms: performance.now() - started, end: cursor === undefined };
  };
  await fill(); // warm-up
  const { counts, ms, end } = await fill();
  const items = counts.reduce((a, b) => a + b, 0);
  const follows = counts.length - 1;
  const reached = end && items < PAGE_SIZE ? `the end (${items} items)` : `${items} items`;
  const display = `page 1: ${counts[0]}; ${end && items < PAGE_SIZE ? `end (${items})` : items} after ${follows} follows; ${formatNumber(ms)} ms`;
  log(`  ${tenant} first page: ${display} (SEARCH_WINDOW ${SEARCH_WINDOW.toLocaleString("en-US")})`);
  return {
    scenario: "portal",
    name: `${tenant} GET messages: filling a page of ${PAGE_SIZE}`,
    unit: "follows",
    postel: follows,
    display,
    postelRuns: [follows],
    note: `${tenant}: the first page of GET messages held ${counts[0]} of ${PAGE_SIZE}; ${follows} nextCursor follows (each examining ${SEARCH_WINDOW.toLocaleString("en-US")} messages) reached ${reached} in ${formatNumber(ms)} ms`,
  };
}
