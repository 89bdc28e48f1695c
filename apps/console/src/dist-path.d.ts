/** Absolute path of the built console (`vite build` output). */
export declare const CONSOLE_DIST_DIR: string;
/** Absolute path of the built chat widget script, served by the edge as /widget.js. */
export declare const WIDGET_FILE: string;
