import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

// Served by the edge under /app/ (apps/edge/src/http/console-ui.ts); `pnpm dev`
// proxies the API to a running stack on GATEWAY_URL (default http://127.0.0.1:8080).
const gateway = process.env.GATEWAY_URL ?? "http://127.0.0.1:8080";
const api = ["/auth", "/console", "/ops", "/v1", "/health"];

export default defineConfig({
  base: "/app/",
  plugins: [react()],
  build: { outDir: "dist", emptyOutDir: true, sourcemap: false, chunkSizeWarningLimit: 800 },
  server: { proxy: Object.fromEntries(api.map((p) => [p, gateway])) },
});
