// The package's one entry point; modules inside it import each other, never this file.
export * from "./app-error.js";
export { describeIssue, parseInput } from "./validation.js";
export { isUnavailableFailure } from "./unavailable.js";
