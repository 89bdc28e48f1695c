// Where the built console lives, for the edge to serve (apps/edge/src/http/console-ui.ts).
import { fileURLToPath } from "node:url";

export const CONSOLE_DIST_DIR = fileURLToPath(new URL("../dist", import.meta.url));
