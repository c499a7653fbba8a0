import { ManualClock, Postel, type PostelInstance, type Storage } from "@postel/core";
import { createDashboard, type Dashboard, type DashboardGrant } from "../../src/index.js";
import { startReceiver, type TestReceiver } from "./receiver.js";
import { createStorage, type TestStorage } from "./storages.js";

export type Role = "admin" | "read-only";
const GRANTS: Record<Role, DashboardGrant> = {
  admin: { role: "admin", actor: "ada@example.test" },
  "read-only": { role: "read-only", actor: "rob@example.test" },
};

/**
 * A Postel on a real database with a manual clock, a real receiver, and its dashboard at `/postel`
 * spoken to as a browser would (the CSRF cookie and token of a page, `x-role` naming the grant).
 */
export interface Harness {
  postel: PostelInstance<Storage<unknown>>;
  clock: ManualClock;
  receiver: TestReceiver;
  dashboard: Dashboard;
  get(path: string, role?: Role): Promise<Response>;
  /** The page's text, after checking it answered 200. */
  text(path: string, role?: Role): Promise<string>;
  post(path: string, fields: [string, string][] | Record<string, string>, role?: Role): Promise<Response>;
  close(): Promise<void>;
}

export async function startHarness(storageName: TestStorage["name"]): Promise<Harness> {
  const database: TestStorage = await createStorage(storageName);
  const receiver = await startReceiver();
  const clock = new ManualClock();
  const postel = Postel({
    outbound: {
      storage: database.storage,
      http: { allowPrivateNetworks: true },
      workers: { pollInterval: "1h" },
      credentials: { encryption: "off" },
    },
    clock,
  });
  const dashboard = createDashboard({
    postel,
    basePath: "/postel",
    clock,
    authorize: (request) => GRANTS[request.headers.get("x-role") as Role] ?? false,
  });
  const url = (path: string) => `http://127.0.0.1/postel${path}`;
  const first = await dashboard(new Request(url("/dead-letters"), { headers: { "x-role": "admin" } }));
  const cookie = first.headers.get("set-cookie")!.split(";")[0]!;
  const token = /name="_csrf" value="([^"]+)"/.exec(await first.text())![1]!;
  const get = (path: string, role: Role = "admin") =>
    dashboard(new Request(url(path), { headers: { cookie, "x-role": role } }));
  return {
    postel,
    clock,
    receiver,
    dashboard,
    get,
    async text(path, role) {
      const response = await get(path, role);
      if (response.status !== 200) throw new Error(`GET ${path} answered ${response.status}`);
      return response.text();
    },
    post: (path, fields, role = "admin") => dashboard(formPost(url(path), fields, { cookie, token, role })),
    async close() {
      await postel.close();
      await receiver.close();
      await database.drop();
    },
  };
}

/** The hidden fields of the form `id` of a page, as a browser would post them. */
export function formFields(page: string, id = "confirm"): [string, string][] {
  const form = new RegExp(`<form[^>]*id="${id}"[^>]*>([\\s\\S]*?)</form>`).exec(page)?.[1] ?? "";
  return [...form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [
    m[1]!,
    decodeAttribute(m[2]!),
  ]);
}

const ENTITIES: Record<string, string> = { quot: '"', lt: "<", gt: ">", "#39": "'", "#96": "`", amp: "&" };

/** An attribute value as a browser reads it: the template's entities decoded, once. */
function decodeAttribute(value: string): string {
  return value.replace(/&(quot|lt|gt|#39|#96|amp);/g, (_, name: string) => ENTITIES[name]!);
}

/** The element with `id` of a page, up to its closing tag (`tag`, not nested inside itself). */
export function element(page: string, id: string, tag: string): string {
  const start = page.indexOf(`id="${id}"`);
  if (start < 0) throw new Error(`no element with id="${id}"`);
  const end = page.indexOf(`</${tag}>`, start);
  return page.slice(page.lastIndexOf("<", start), end + tag.length + 3);
}

/** A form POST as a browser sends it from the dashboard's own page: its cookie, CSRF token and origin. */
export function formPost(
  url: string,
  fields: [string, string][] | Record<string, string>,
  { cookie, token, role }: { cookie: string; token: string; role: string },
): Request {
  return new Request(url, {
    method: "POST",
    headers: {
      cookie,
      "x-role": role,
      "content-type": "application/x-www-form-urlencoded",
      "sec-fetch-site": "same-origin",
      origin: "http://127.0.0.1",
    },
    body: new URLSearchParams([
      ...(Array.isArray(fields) ? fields : Object.entries(fields)),
      ["_csrf", token],
    ]),
  });
}
