import { defineConfig } from "tsdown";

export default defineConfig({
  entry: [
    "src/index.ts",
    "src/inbound.ts",
    "src/testing.ts",
    "src/storage-kit.ts",
    "src/storage-conformance.ts",
  ],
  format: "esm",
  platform: "node",
  target: "node20.19",
  dts: true,
  sourcemap: true,
  clean: true,
  fixedExtension: false,
});
