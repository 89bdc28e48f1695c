// The console's only door to the gateway: its public HTTP API, the same one curl and
// the SDKs use. Sessions come from /auth/login; the access token is refreshed shortly
// before it expires, and a 401 triggers one refresh and one retry. Response shapes come
// from api-types.ts, generated from the edge's OpenAPI document (docs/decisions/0196).
import type { BodyOf, Components, ResponseOf } from "./api-types.js";

export type Session = { token: string; refresh_token: string; expires_at: number };

export type SessionStore = {
  load(): Session | null;
  save(session: Session | null): void;
};

/** The contract's error body `{error, message, request_id}`, as a thrown value. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly requestId: string | null,
    readonly body: unknown = undefined,
  ) {
    super(message);
    this.name = "ApiError";
  }

  /** The route itself is missing on this gateway (an API another release adds). */
  get routeMissing(): boolean {
    return this.status === 404 && /^No route for /.test(this.message);
  }

  /** One line a person can read: what failed, and the id to quote to an operator. */
  describe(): string {
    if (this.routeMissing) return "Not available on this gateway (its API is not part of this release).";
    return `${this.message}${this.requestId ? ` (request ${this.requestId})` : ""}`;
  }
}

export function describeError(err: unknown): string {
  if (err instanceof ApiError) return err.describe();
  if (err instanceof TypeError) return "The gateway could not be reached.";
  return err instanceof Error ? err.message : String(err);
}

export type Credential = { kind: "session" } | { kind: "apiKey"; key: string } | { kind: "none" };

export type RequestOptions = {
  body?: unknown;
  /** Raw bytes (file upload); sent as application/octet-stream. */
  raw?: Blob | ArrayBuffer;
  headers?: Record<string, string>;
  auth?: Credential;
};

export type ApiResponse<T> = { status: number; body: T; headers: Headers };

/** Refresh this long before the access token expires. */
export const REFRESH_MARGIN_MS = 60_000;

export class ApiClient {
  private session: Session | null;
  private refreshing: Promise<boolean> | null = null;
  /** Called when the session ends (logout, or a refresh that failed). */
  onSignedOut: () => void = () => undefined;

  constructor(
    private readonly base: string,
    private readonly store: SessionStore,
    private readonly fetchImpl: typeof fetch = (...args) => fetch(...args),
    private readonly now: () => number = Date.now,
  ) {
    this.session = store.load();
  }

  get signedIn(): boolean {
    return this.session !== null;
  }

  async login(email: string, password: string): Promise<void> {
    const res = await this.send<ResponseOf<"POST /auth/login">>("POST", "/auth/login", { body: { email, password }, auth: { kind: "none" } });
    this.setSession(res.body);
  }

  async register(input: BodyOf<"POST /auth/register">): Promise<void> {
    await this.send("POST", "/auth/register", { body: input, auth: { kind: "none" } });
    await this.login(input.email, input.password);
  }

  async logout(): Promise<void> {
    if (this.session) await this.send("POST", "/auth/logout", {}).catch(() => undefined);
    this.clear();
  }

  /** A call with the session (default), an API key, or nothing; throws ApiError on 4xx/5xx. */
  async send<T = unknown>(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse<T>> {
    const auth = options.auth ?? { kind: "session" };
    if (auth.kind === "session" && this.session && this.session.expires_at - this.now() < REFRESH_MARGIN_MS) await this.refresh();
    let res = await this.once(method, path, options, auth);
    if (res.status === 401 && auth.kind === "session" && this.session) {
      if (await this.refresh()) res = await this.once(method, path, options, auth);
    }
    const text = await res.text();
    let body: unknown;
    if (text) {
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
    }
    if (res.status >= 400) {
      const err = (body ?? {}) as Partial<Components["Error"]>;
      if (res.status === 401 && auth.kind === "session") this.clear();
      throw new ApiError(res.status, err.error ?? "error", err.message ?? `HTTP ${res.status}`, err.request_id ?? res.headers.get("x-request-id"), body);
    }
    return { status: res.status, body: body as T, headers: res.headers };
  }

  /** `data` of a wrapped answer (`/console`, `/ops`, `/v1/apps`). */
  async data<T>(method: string, path: string, options?: RequestOptions): Promise<T> {
    return (await this.send<{ data: T }>(method, path, options)).body.data;
  }

  /**
   * One refresh at a time; a used or revoked refresh token ends the session. A refresh
   * refused for now (429: too many attempts from this address; 5xx) used nothing up:
   * the session stays, and the next call tries again.
   */
  refresh(): Promise<boolean> {
    this.refreshing ??= (async () => {
      const current = this.session;
      if (!current) return false;
      try {
        const res = await this.fetchImpl(`${this.base}/auth/refresh`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ refresh_token: current.refresh_token }),
        });
        if (res.status === 429 || res.status >= 500) return false;
        if (res.status !== 200) {
          this.clear();
          return false;
        }
        this.setSession((await res.json()) as ResponseOf<"POST /auth/refresh">);
        return true;
      } catch {
        return false;
      } finally {
        this.refreshing = null;
      }
    })();
    return this.refreshing;
  }

  private once(method: string, path: string, options: RequestOptions, auth: Credential): Promise<Response> {
    const headers: Record<string, string> = { ...options.headers };
    if (auth.kind === "session" && this.session) headers.authorization = `Bearer ${this.session.token}`;
    if (auth.kind === "apiKey") headers["x-api-key"] = auth.key;
    let body: BodyInit | undefined;
    if (options.raw !== undefined) {
      body = options.raw;
      headers["content-type"] ??= "application/octet-stream";
    } else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers["content-type"] = "application/json";
    }
    return this.fetchImpl(`${this.base}${path}`, { method, headers, ...(body !== undefined ? { body } : {}) });
  }

  private setSession(pair: Pick<ResponseOf<"POST /auth/login">, "token" | "refresh_token" | "expires_in">): void {
    this.session = { token: pair.token, refresh_token: pair.refresh_token, expires_at: this.now() + pair.expires_in * 1000 };
    this.store.save(this.session);
  }

  private clear(): void {
    const had = this.session !== null;
    this.session = null;
    this.store.save(null);
    if (had) this.onSignedOut();
  }
}

/** Keeps the session in the browser's localStorage (this origin only). */
export function browserStore(storage: Storage, key = "gateway-console-session"): SessionStore {
  return {
    load() {
      try {
        const raw = storage.getItem(key);
        return raw ? (JSON.parse(raw) as Session) : null;
      } catch {
        return null;
      }
    },
    save(session) {
      if (session) storage.setItem(key, JSON.stringify(session));
      else storage.removeItem(key);
    },
  };
}
