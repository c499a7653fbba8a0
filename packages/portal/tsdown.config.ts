import { defineConfig } from "tsdown";

export default defineConfig({
  entry: {
    index: "src/index.ts",
    express: "src/mounts/express.ts",
    fastify: "src/mounts/fastify.ts",
    hono: "src/mounts/hono.ts",
    next: "src/mounts/next.ts",
    // The browser client: it must import nothing (no node:*, no framework, no @postel/core).
    client: "src/client.ts",
  },
  format: "esm",
  platform: "node",
  target: "node20.19",
  dts: true,
  sourcemap: true,
  clean: true,
  fixedExtension: false,
});
