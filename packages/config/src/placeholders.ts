/**
 * Values the project itself publishes (local defaults, docker-compose, the
 * Kubernetes example Secret, .env.example, and the defaults those files held
 * before docs/decisions/0182): anyone can read them, so in production a secret
 * equal to one of them protects nothing. `loadEnv` refuses them there.
 */
const SHIPPED_VALUES = new Set([
  // docker-compose.yml before 0182
  "compose-local-jwt-secret-change-me-0123456789",
  "compose-local-widget-jwt-secret-change-me-0123",
  "change-me-admin-password",
  // deploy/base/config.yaml before 0182
  "replace-with-at-least-32-random-characters-000",
  "replace-with-other-32-random-characters-0001",
  "postgresql://postgres:postgres@postgres:5432/postgres",
]);

/**
 * Words that mark a value as a stand-in to be replaced (`REPLACE-ME`, `change-me`,
 * `replace-with-...`): the shipped files use them for every secret.
 */
const PLACEHOLDER_MARK = /change[-_ ]?me|replace[-_ ]?(me|with)|placeholder/i;

/** Is `value` a placeholder the project ships (by value or by its marker words)? */
export function isShippedPlaceholder(value: string): boolean {
  return SHIPPED_VALUES.has(value) || PLACEHOLDER_MARK.test(value);
}

/** The message every service gives for a refused placeholder (never the value itself). */
export const PLACEHOLDER_MESSAGE =
  "is a placeholder or local default shipped with the project and is refused in production: set your own secret (scripts/gen-secrets.sh prints a set)";
