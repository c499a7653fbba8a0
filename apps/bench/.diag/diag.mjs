import { createServer } from "node:http";
import postgres from "postgres";
import { Postel } from "@postel/core";
import { PostgresStorage, migrate } from "@postel/storage-postgres";

const keys = Number(process.argv[2] ?? 1000);
const count = Number(process.argv[3] ?? 20000);
const admin = postgres("postgres://postgres@127.0.0.1:5432/test", { max: 1, onnotice: () => {} });
const name = `diag_${process.pid}`;
await admin.unsafe(`CREATE DATABASE ${name}`);
const url = `postgres://postgres@127.0.0.1:5432/${name}`;
const setup = postgres(url, { max: 2, onnotice: () => {} });
await migrate(setup);
const server = createServer((req, res) => req.resume().on("end", () => res.writeHead(200).end("ok")));
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const totals = new Map();
const sql = postgres(url, {
  max: 10,
  onnotice: (n) => {
    const msg = String(n.message ?? "");
    if (msg.includes("plan:") && msg.includes("Materialized") && !globalThis.shown) { globalThis.shown = true; console.log(msg.slice(0, 6000)); }
    const m = /^duration: ([\d.]+) ms\s+(?:statement|execute [^:]*): ([\s\S]*)/.exec(String(n.message ?? ""));
    if (!m) return;
    const key = m[2].replace(/\s+/g, " ").slice(0, 90);
    const t = totals.get(key) ?? { n: 0, ms: 0 };
    t.n++; t.ms += Number(m[1]);
    totals.set(key, t);
  },
  connection: { log_min_duration_statement: "0", client_min_messages: "log", session_preload_libraries: "auto_explain", "auto_explain.log_min_duration": "80", "auto_explain.log_analyze": "on", "auto_explain.log_level": "log" },
});
const storage = PostgresStorage({ sql }, { migrate: false });
const postel = Postel({ outbound: { storage, http: { allowPrivateNetworks: true } } });
await postel.outbound.endpoints.create({ url: `http://127.0.0.1:${server.address().port}/`, types: ["*"] });
await setup`
  INSERT INTO postel.messages (id, type, payload, status, created_at, ordering_key)
  SELECT 'msg_bench' || lpad(i::text, 10, '0'), 'order.created', '{}', 'pending', ${Date.now()}::bigint,
    ${keys > 0 ? setup`'key_' || ((i - 1) % ${keys}::int)` : setup`NULL`}
  FROM generate_series(1, ${count}::int) AS i`;
await setup`VACUUM ANALYZE postel.messages`;
let delivered = 0;
postel.on("delivered", () => delivered++);
const start = Date.now();
await postel.start();
while (delivered < count) await new Promise((r) => setTimeout(r, 100));
const elapsed = Date.now() - start;
await postel.close();
console.log(`${count} deliveries, ${keys} keys: ${Math.round(count / (elapsed / 1000))}/s`);
for (const [k, t] of [...totals].sort((a, b) => b[1].ms - a[1].ms).slice(0, 8)) console.log(`${Math.round(t.ms)} ms  ${t.n}x  ${k}`);
server.close();
await setup.end();
await admin.unsafe(`DROP DATABASE ${name} WITH (FORCE)`);
await admin.end();
