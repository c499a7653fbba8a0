import type { Portal } from "../../src/index.js";

/**
 * A cookie jar and form filler over a portal handler, called in-process: what a browser does
 * between pages, without a browser. `post` sends the CSRF token of the last page it read.
 */
export class PortalVisitor {
  readonly cookies = new Map<string, string>();
  lastPage = "";

  constructor(
    private readonly portal: Portal,
    private readonly origin = "http://app.example",
  ) {}

  async request(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size > 0)
      headers.set("cookie", [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; "));
    const response = await this.portal(new Request(`${this.origin}${path}`, { ...init, headers }));
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const at = pair!.indexOf("=");
      const name = pair!.slice(0, at);
      const value = pair!.slice(at + 1);
      if (value === "" || /max-age=0/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return response;
  }

  /** GETs a page and remembers it (for its CSRF token). */
  async get(path: string): Promise<{ status: number; text: string; response: Response }> {
    const response = await this.request(path);
    const text = await response.text();
    if (response.headers.get("content-type")?.startsWith("text/html")) this.lastPage = text;
    return { status: response.status, text, response };
  }

  /** POSTs a form as the browser would from the last page (same origin, its CSRF token). */
  async post(
    path: string,
    fields: Record<string, string | string[]> = {},
    options: { csrf?: boolean; headers?: Record<string, string> } = {},
  ): Promise<{ status: number; text: string; location: string | null; response: Response }> {
    const form = new URLSearchParams();
    for (const [name, value] of Object.entries(fields))
      for (const one of Array.isArray(value) ? value : [value]) form.append(name, one);
    const token = /name="_csrf" value="([^"]+)"/.exec(this.lastPage)?.[1];
    if (options.csrf !== false && token !== undefined) form.set("_csrf", token);
    const response = await this.request(path, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        "sec-fetch-site": "same-origin",
        origin: this.origin,
        ...options.headers,
      },
      body: form.toString(),
    });
    const text = await response.text();
    if (response.headers.get("content-type")?.startsWith("text/html")) this.lastPage = text;
    return { status: response.status, text, location: response.headers.get("location"), response };
  }

  /** Follows a portal link the way the sign-in page's script does: GET the page, POST the fragment's token. */
  async signIn(link: string) {
    const [path, fragment] = link.split("#") as [string, string];
    const page = await this.get(path);
    if (page.status !== 200) throw new Error(`sign-in page answered ${page.status}`);
    return this.post(path, { token: new URLSearchParams(fragment).get("token") ?? "" });
  }
}
