#!/usr/bin/env node
// The committed entry point of `gateway-migrate`: pnpm links a package's commands at
// install time, before dist/ is built, and skips one whose file is missing then.
await import("../dist/cli.js");
