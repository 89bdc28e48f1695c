/** Absolute path of the built console (`vite build` output). */
export declare const CONSOLE_DIST_DIR: string;
