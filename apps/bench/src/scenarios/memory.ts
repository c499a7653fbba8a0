import { drainWithPostel, startReceiver } from "../drain-run.js";
import type { Scenario } from "../scenario.js";
import { type Metric, median } from "../stats.js";

/** Peak resident memory (the kernel's VmHWM) of a worker process draining 100,000 messages. */
export const memory: Scenario = {
  name: "memory",
  storage: "postgres",
  description: "peak RSS of the worker process while draining 100,000 messages (≤ 200 MB)",
  async run({ scale, log }) {
    const { receiver, base } = await startReceiver();
    try {
      const peaks: number[] = [];
      const rates: number[] = [];
      for (let run = 1; run <= scale.runs; run++) {
        const measured = await drainWithPostel(base, {
          messages: scale.memoryMessages,
          endpoints: 1,
          log,
          receiver,
          label: `run ${run}/${scale.runs}`,
        });
        peaks.push(measured.peakRssBytes / 2 ** 20);
        rates.push(measured.perSecond);
      }
      const n = scale.memoryMessages.toLocaleString("en-US");
      return [
        {
          scenario: "memory",
          name: `worker peak RSS, ${n} messages`,
          unit: "MB",
          postel: median(peaks),
          postelRuns: peaks,
          target: { op: "<=", value: 200 },
        },
        {
          scenario: "memory",
          name: `drain of ${n} messages`,
          unit: "deliveries/s",
          postel: median(rates),
          postelRuns: rates,
        },
      ] satisfies Metric[];
    } finally {
      await receiver.kill();
    }
  },
};
