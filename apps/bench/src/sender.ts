import { Postel } from "@postel/core";
import { PostgresStorage } from "@postel/storage-postgres";
import {
  childConfig,
  preciseNow,
  report,
  type SenderCommand,
  type SenderConfig,
  type SenderReport,
} from "./protocol.js";

// The application process of the wake-up scenario: it only sends (no worker runs here), one message
// at a time, and notes when each `send()` returned, i.e. when its commit was acknowledged.
const config = childConfig<SenderConfig>();
const storage = PostgresStorage({ url: config.url }, { migrate: false });
const postel = Postel({ outbound: { storage } });

process.on("message", async (command: SenderCommand) => {
  if (command.type !== "go") return;
  const commits: [string, number][] = [];
  for (let i = 0; i < config.count; i++) {
    const { id } = await postel.outbound.send({ type: "order.created", data: { n: i } });
    commits.push([id, preciseNow()]);
    await new Promise((resolve) => setTimeout(resolve, config.intervalMs));
  }
  report<SenderReport>({ type: "sent", commits });
  await postel.close();
  process.disconnect();
});

await postel.outbound.endpoints.list();
report<SenderReport>({ type: "ready" });
