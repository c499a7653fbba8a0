import { defineConfig } from "tsdown";

export default defineConfig({
  entry: ["src/index.ts", "src/inbound.ts"],
  format: "esm",
  platform: "node",
  target: "node20.19",
  dts: true,
  sourcemap: true,
  clean: true,
  fixedExtension: false,
});
