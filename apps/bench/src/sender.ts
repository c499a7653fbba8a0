import { isPostelError, Postel } from "@postel/core";
import { PostgresStorage } from "@postel/storage-postgres";
import {
  childConfig,
  preciseNow,
  report,
  type SenderCommand,
  type SenderConfig,
  type SenderReport,
} from "./protocol.js";

// The application process of the wake-up scenarios: it only sends (no worker runs here), one message
// at a time, and notes when each `send()` returned, i.e. when its commit was acknowledged. It stops
// after `count` messages, or earlier when told to, once it has sent `minCount`.
const config = childConfig<SenderConfig>();
const storage = PostgresStorage({ url: config.url }, { migrate: false });
const postel = Postel({ outbound: { storage } });
let stopping = false;

process.on("message", async (command: SenderCommand) => {
  if (command.type === "stop") {
    stopping = true;
    return;
  }
  const commits: [string, number][] = [];
  const failures: Record<string, number> = {};
  const type = config.type ?? "order.created";
  for (let i = 0; i < config.count; i++) {
    if (stopping && i >= (config.minCount ?? 0)) break;
    try {
      const keys = config.orderingKeys;
      const event =
        keys === undefined
          ? { type, data: { n: i } }
          : { type, data: { n: i }, orderingKey: `quiet_${i % keys}` };
      const { id } = await postel.outbound.send(event);
      commits.push([id, preciseNow()]);
    } catch (error) {
      if (!config.tolerateFailures) throw error;
      const code = isPostelError(error) ? error.code : "not a PostelError";
      failures[code] = (failures[code] ?? 0) + 1;
    }
    await new Promise((resolve) => setTimeout(resolve, config.intervalMs));
  }
  report<SenderReport>({ type: "sent", commits, failures });
  await postel.close();
  process.disconnect();
});

await postel.outbound.endpoints.list();
report<SenderReport>({ type: "ready" });
