import { defineConfig } from "vite";

// The embeddable chat widget: one self-contained script, dist/widget.js, served by the
// edge at /widget.js (docs/decisions/0178). Built after the console (which empties dist/).
export default defineConfig({
  build: {
    outDir: "dist",
    emptyOutDir: false,
    sourcemap: false,
    target: "es2022",
    lib: { entry: "src/widget/widget.ts", formats: ["iife"], name: "GatewayWidget", fileName: () => "widget.js" },
  },
});
