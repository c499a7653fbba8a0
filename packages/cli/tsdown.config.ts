import { defineConfig } from "tsdown";

export default defineConfig({
  entry: ["src/bin.ts"],
  format: "esm",
  platform: "node",
  target: "node20.19",
  dts: false,
  sourcemap: true,
  clean: true,
  fixedExtension: false,
});
