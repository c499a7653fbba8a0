import { createSigner } from "@postel/signing";
import { Agent } from "undici";

// The hand-written webhook task the peer queues (graphile-worker, pg-boss) run: what an application
// using one of them for webhooks writes. The job carries the webhook id and the body as the bytes to
// sign (a string, never re-serialised); the endpoint and its secret come from the application's
// configuration. Signed like Postel's (Standard Webhooks headers, @postel/signing), POSTed with
// undici's request API on a keep-alive pool, as Postel and the minimal loop do.

/** One webhook job as the peers store it. */
export interface WebhookJob {
  id: string;
  body: string;
}

/** `count` jobs with distinct Standard Webhooks ids, all carrying `body`. */
export function webhookJobs(count: number, body: string): WebhookJob[] {
  return Array.from({ length: count }, (_, i) => ({
    id: `msg_peer${String(i + 1).padStart(10, "0")}`,
    body,
  }));
}

/** Delivers jobs to one endpoint: at most `connections` requests in flight, the rest wait in the pool. */
export interface WebhookPoster {
  /** Signs and POSTs the job; throws unless the endpoint answers 2xx, so the queue retries it. */
  post(job: WebhookJob): Promise<void>;
  close(): Promise<void>;
}

/** The poster for one endpoint: one signer, one keep-alive connection pool. */
export function webhookPoster(endpoint: { url: string; secret: string }, connections: number): WebhookPoster {
  const signer = createSigner(endpoint.secret);
  const agent = new Agent({ connections });
  const { origin, pathname: path } = new URL(endpoint.url);
  return {
    async post(job) {
      const headers = signer.sign(job.id, Math.floor(Date.now() / 1000), job.body);
      const response = await agent.request({
        origin,
        path,
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body: job.body,
      });
      await response.body.dump();
      if (response.statusCode < 200 || response.statusCode > 299) {
        throw new Error(`webhook ${job.id}: the endpoint answered ${response.statusCode}`);
      }
    },
    close: () => agent.close(),
  };
}

/** Resolves once `isDone` answers true, asking every `intervalMs` (the peers' completions land late). */
export async function waitUntil(isDone: () => Promise<boolean>, intervalMs = 5): Promise<void> {
  while (!(await isDone())) await new Promise((resolve) => setTimeout(resolve, intervalMs));
}
