import { fileURLToPath } from "node:url";

/** The repository this test kit belongs to. */
export const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url));
