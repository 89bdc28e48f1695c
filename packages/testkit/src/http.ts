/** Small helpers for talking to the edge in tests. */
// biome-ignore lint/suspicious/noExplicitAny: tests read answers loosely and assert their shape; a typed default would cast in every test
export type JsonResponse<T = any> = { status: number; headers: Headers; body: T };

// biome-ignore lint/suspicious/noExplicitAny: as JsonResponse above
export async function call<T = any>(
  baseUrl: string,
  method: string,
  path: string,
  options: { body?: unknown; token?: string; headers?: Record<string, string>; rawBody?: string } = {},
): Promise<JsonResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) {
    headers["content-type"] ??= "application/json";
    body = JSON.stringify(options.body);
  }
  const res = await fetch(`${baseUrl}${path}`, { method, headers, ...(body !== undefined ? { body } : {}) });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = text;
  }
  return { status: res.status, headers: res.headers, body: parsed as T };
}

/** Signs in and returns the access token. */
export async function signIn(baseUrl: string, email: string, password: string): Promise<string> {
  const res = await call<{ token: string }>(baseUrl, "POST", "/auth/login", { body: { email, password } });
  if (res.status !== 200) throw new Error(`sign-in failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.token;
}

/** Registers a user (with a new tenant) and signs in. */
export async function newTenant(
  baseUrl: string,
  label = "user",
): Promise<{ email: string; password: string; token: string; userId: string; tenantId: string }> {
  const email = `${label}-${Math.random().toString(36).slice(2, 10)}@example.com`;
  const password = "a-long-enough-password";
  const res = await call<{ user_id: string; tenant_id: string }>(baseUrl, "POST", "/auth/register", { body: { email, password } });
  if (res.status !== 201) throw new Error(`register failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { email, password, token: await signIn(baseUrl, email, password), userId: res.body.user_id, tenantId: res.body.tenant_id };
}
