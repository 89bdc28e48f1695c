// Where the built console lives, for the edge to serve (apps/edge/src/http/console-ui.ts).
import { fileURLToPath } from "node:url";

export const CONSOLE_DIST_DIR = fileURLToPath(new URL("../dist", import.meta.url));

/** The embeddable chat widget script (`vite build -c vite.widget.config.ts`), served as /widget.js. */
export const WIDGET_FILE = fileURLToPath(new URL("../dist/widget.js", import.meta.url));
