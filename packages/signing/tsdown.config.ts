import { defineConfig } from "tsdown";

export default defineConfig({
  // The two crypto variants are entries of their own: the code imports `#crypto`, left external, and
  // package.json's `imports` map picks dist/crypto-node.js or dist/crypto-web.js by export condition.
  entry: {
    index: "src/index.ts",
    inbound: "src/inbound.ts",
    "crypto-node": "src/internal/crypto-node.ts",
    "crypto-web": "src/internal/crypto-web.ts",
  },
  deps: { neverBundle: ["#crypto"] },
  format: "esm",
  platform: "node",
  target: "node20.19",
  dts: true,
  sourcemap: true,
  clean: true,
  fixedExtension: false,
});
