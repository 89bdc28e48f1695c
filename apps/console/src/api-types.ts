// Generated from the edge's OpenAPI document (version 2026.09.22-managed-ai.1) by `pnpm --filter @gateway/edge run console-api-types`.
// Do not edit: the edge's test fails when this file differs from what the routes declare.

/** Schemas the operations refer to. */
export type Components = {
  /** The flat error body; services may add fields such as `pricing`. */
  Error: {
    error: "invalid_request" | "unauthorized" | "insufficient_balance" | "forbidden" | "not_found" | "conflict" | "payload_too_large" | "validation_failed" | "rate_limited" | "internal_error" | "upstream_error" | "unavailable";
    message: string;
    request_id: string;
    [key: string]: unknown;
  };
  /** Anthropic's error body; the contract's extras (`pricing`, `budget`, `param`) beside `error`. */
  AnthropicError: {
    type: "error";
    error: {
      /** By status (CONTRACT.md 6c): 400 and 409 invalid_request_error, 402 billing_error... */
      type: string;
      message: string;
    };
    request_id: string;
    [key: string]: unknown;
  };
};

/** Every operation: its JSON request body (`never` when it takes none) and its successful answer. */
export type Api = {
  /** Gateway health: 200 when the gateway and its database answer, 503 when the database does not. */
  "GET /health": {
    body: never;
    response: {
      status: "ok" | "degraded";
      db: "ok" | "error";
      /** ISO 8601 UTC */
      ts: string;
    };
  };
  /** Liveness: the process answers. Unlike /health it does not look at the database, so an outage takes replicas out of rotation without restarting them. */
  "GET /health/live": {
    body: never;
    response: {
      status: "ok";
      ts: string;
    };
  };
  /** The OpenAPI 3.1 description of every route, generated from the schemas that validate them. */
  "GET /openapi.json": {
    body: never;
    response: Record<string, unknown>;
  };
  /** Prometheus metrics of this edge replica. */
  "GET /metrics": {
    body: never;
    response: string;
  };
  /** Create an account: a new tenant whose owner is the registering user. */
  "POST /auth/register": {
    body: {
      /** Sign-in email; compared case-insensitively. */
      email: string;
      password: string;
      name?: string;
      tenant_name?: string;
    };
    response: {
      user_id: string;
      tenant_id: string;
    };
  };
  /** Sign in; returns an access token and a one-use refresh token. */
  "POST /auth/login": {
    body: {
      /** Sign-in email; compared case-insensitively. */
      email: string;
      password: string;
    };
    response: {
      /** Session access token (JWT); send as Authorization: Bearer. */
      token: string;
      /** One use only; presenting a used one signs the session out. */
      refresh_token: string;
      token_type: "Bearer";
      /** Seconds until the access token expires. */
      expires_in: number;
    };
  };
  /** Exchange a refresh token for a new pair. Each refresh token works once; reuse signs the session out. */
  "POST /auth/refresh": {
    body: {
      refresh_token: string;
    };
    response: {
      /** Session access token (JWT); send as Authorization: Bearer. */
      token: string;
      /** One use only; presenting a used one signs the session out. */
      refresh_token: string;
      token_type: "Bearer";
      /** Seconds until the access token expires. */
      expires_in: number;
    };
  };
  /** Sign out: the session's access and refresh tokens stop working at once. */
  "POST /auth/logout": {
    body: never;
    response: undefined;
  };
  /** Grant or remove a user's platform role (platform_admin only). */
  "PUT /ops/users/{id}/platform-role": {
    body: {
      /** null removes the platform role */
      role: "platform_admin" | "admin" | "finance" | null;
    };
    response: {
      data: {
        user_id: string;
        platform_role: "platform_admin" | "admin" | "finance" | null;
      };
    };
  };
  /** Top up a tenant's balance. With Idempotency-Key, a repeat returns the same entry and credits once. */
  "POST /ops/ledger/tenants/{tenant_id}/credits": {
    body: {
      /** Units of USD 0.0001 to add to the available balance. */
      units: number;
      reason: string;
    };
    response: {
      data: {
        entry_id: string;
        available_units: number;
      };
    };
  };
  /** A tenant's balance (operators). */
  "GET /ops/ledger/tenants/{tenant_id}": {
    body: never;
    response: {
      data: {
        currency: "USD";
        available_units: number;
        reserved_units: number;
        tenant_id: string;
      };
    };
  };
  /** Upstream providers, newest first (latest 200), without credentials. */
  "GET /ops/ai/upstreams": {
    body: never;
    response: {
      /** Newest first, at most 200; never credentials. */
      data: {
        id: string;
        provider: string;
        base_url: string;
        enabled: boolean;
        key_configured: boolean;
        version: number;
        /** ISO 8601 UTC */
        created_at: string;
        /** ISO 8601 UTC */
        updated_at: string;
      }[];
    };
  };
  /** Create or update an upstream provider, or rotate its API key (sent keys are stored encrypted and never returned). */
  "PUT /ops/ai/upstreams/{id}": {
    body: {
      /** Any OpenAI-compatible chat API. */
      provider: "openai";
      /** http(s) base URL of the API, e.g. https://api.openai.com/v1 (no credentials, query or fragment). */
      base_url: string;
      /** Stored encrypted, never returned. Absent: keep the stored key; present: replace it (rotation). */
      api_key?: string;
      /** Default true on create; absent keeps the current value. */
      enabled?: boolean;
      /** The version this write replaces: 409 unless it is the current one. 0 (or absent) creates. Absent: no check. */
      version?: number;
    };
    response: {
      data: {
        id: string;
        version: number;
        key_configured: boolean;
      };
    };
  };
  /** Check the provider connection: GET {base_url}/models with the stored key, no inference. A refused connection or a timeout is reported as unreachable. */
  "POST /ops/ai/upstreams/{id}/test": {
    body: never;
    response: {
      data: {
        /** An HTTP answer came from GET {base_url}/models. */
        reachable: boolean;
        /** The answer was 2xx. */
        authenticated: boolean;
        /** The answer's status; null when unreachable (refused, timed out). */
        upstream_status: number | null;
      };
    };
  };
  /** Models by alias, newest first (latest 200), each with its current price version. */
  "GET /ops/ai/models": {
    body: never;
    response: {
      /** Newest first, at most 200. */
      data: {
        alias: string;
        upstream_id: string;
        upstream_model: string;
        enabled: boolean;
        max_output_tokens: number;
        /** The most input tokens one image part counts in a reservation; null: image parts are refused. */
        max_tokens_per_image: number | null;
        version: number;
        /** The newest price version (applies to new requests); null before the first. */
        price: {
          id: string;
          model_alias: string;
          /** 1, 2, 3 ... per model */
          version: number;
          input_units_per_mtok: number;
          output_units_per_mtok: number;
          /** ISO 8601 UTC */
          created_at: string;
        } | null;
        /** ISO 8601 UTC */
        created_at: string;
        /** ISO 8601 UTC */
        updated_at: string;
      }[];
    };
  };
  /** Create or update the model served under an alias. */
  "PUT /ops/ai/models/{alias}": {
    body: {
      /** An existing upstream (404 otherwise). */
      upstream_id: string;
      /** The provider's model name. */
      upstream_model: string;
      /** Default true on create; absent keeps the current value. */
      enabled?: boolean;
      /** Default 4096 on create; absent keeps the current value. */
      max_output_tokens?: number;
      /** The most input tokens the provider counts for one image part; null (the default on create): the model refuses image parts; absent keeps the current value. */
      max_tokens_per_image?: number | null;
      /** The version this write replaces: 409 unless it is the current one. 0 (or absent) creates. Absent: no check. */
      version?: number;
    };
    response: {
      data: {
        alias: string;
        upstream_id: string;
        upstream_model: string;
        enabled: boolean;
        max_output_tokens: number;
        /** The most input tokens one image part counts in a reservation; null: image parts are refused. */
        max_tokens_per_image: number | null;
        version: number;
        /** The newest price version (applies to new requests); null before the first. */
        price: {
          id: string;
          model_alias: string;
          /** 1, 2, 3 ... per model */
          version: number;
          input_units_per_mtok: number;
          output_units_per_mtok: number;
          /** ISO 8601 UTC */
          created_at: string;
        } | null;
        /** ISO 8601 UTC */
        created_at: string;
        /** ISO 8601 UTC */
        updated_at: string;
      };
    };
  };
  /** A model's price versions, newest first (latest 100). */
  "GET /ops/ai/models/{alias}/prices": {
    body: never;
    response: {
      /** Newest first, at most 100. */
      data: {
        id: string;
        model_alias: string;
        /** 1, 2, 3 ... per model */
        version: number;
        input_units_per_mtok: number;
        output_units_per_mtok: number;
        /** ISO 8601 UTC */
        created_at: string;
      }[];
    };
  };
  /** Publish a new immutable price version of a model; it applies to new requests. */
  "POST /ops/ai/models/{alias}/prices": {
    body: {
      /** Units of USD 0.0001 per million input tokens. */
      input_units_per_mtok: number;
      /** Units of USD 0.0001 per million output tokens. */
      output_units_per_mtok: number;
    };
    response: {
      data: {
        alias: string;
        upstream_id: string;
        upstream_model: string;
        enabled: boolean;
        max_output_tokens: number;
        /** The most input tokens one image part counts in a reservation; null: image parts are refused. */
        max_tokens_per_image: number | null;
        version: number;
        /** The newest price version (applies to new requests); null before the first. */
        price: {
          id: string;
          model_alias: string;
          /** 1, 2, 3 ... per model */
          version: number;
          input_units_per_mtok: number;
          output_units_per_mtok: number;
          /** ISO 8601 UTC */
          created_at: string;
        } | null;
        /** ISO 8601 UTC */
        created_at: string;
        /** ISO 8601 UTC */
        updated_at: string;
      };
    };
  };
  /** Customer offers, newest first (latest 200), optionally of one tenant and/or model. */
  "GET /ops/ai/discounts": {
    body: never;
    response: {
      /** Newest first, at most 200. */
      data: {
        id: string;
        tenant_id: string;
        model_alias: string;
        discount_bps: number;
        expires_at: string | null;
        version: number;
        /** ISO 8601 UTC */
        created_at: string;
        /** ISO 8601 UTC */
        updated_at: string;
      }[];
    };
  };
  /** Create or replace the one offer (discount) of a tenant on a model. */
  "PUT /ops/ai/discounts": {
    body: {
      /** An existing tenant (404 otherwise). */
      tenant_id: string;
      /** An existing model (404 otherwise). */
      model_alias: string;
      /** Basis points off the list price. */
      discount_bps: number;
      /** ISO 8601 UTC; null removes the expiry; absent keeps it (none on create). */
      expires_at?: string | null;
      /** The version this write replaces: 409 unless it is the current one. 0 (or absent) creates. Absent: no check. */
      version?: number;
    };
    response: {
      data: {
        id: string;
        version: number;
      };
    };
  };
  /** The signed-in user: tenant and roles. */
  "GET /console/me": {
    body: never;
    response: {
      data: {
        user_id: string;
        email: string;
        name: string | null;
        tenant_id: string;
        tenant_role: "owner" | "admin" | "member";
        platform_role: "platform_admin" | "admin" | "finance" | null;
      };
    };
  };
  /** The caller tenant's prepaid balance. */
  "GET /console/balance": {
    body: never;
    response: {
      data: {
        currency: "USD";
        available_units: number;
        reserved_units: number;
      };
    };
  };
  /** The tenant's live API keys, newest first, without secrets: the newest 200, or a page at a time with `limit` and `cursor`. */
  "GET /console/keys": {
    body: never;
    response: {
      data: {
        id: string;
        name: string;
        /** The start of the key's plaintext. */
        prefix: string;
        scopes: string[];
        service_aliases: string[] | null;
        allowed_ips: string[] | null;
        daily_quota: number | null;
        rate_limit_per_minute: number | null;
        concurrency_limit: number | null;
        expires_at: string | null;
        created_at: string;
        /** The spend budget's current period; null: no budget. */
        budget: {
          limit_units: number;
          /** Final charges settled in the current period. */
          spent_units: number;
          /** Held by requests in flight. */
          reserved_units: number;
          period: "day" | "month";
          /** When the current period ends (UTC). */
          resets_at: string;
        } | null;
      }[];
      /** With `limit` or `cursor`: the cursor of the next page, null at the end. */
      next_cursor?: string | null;
    };
  };
  /** Create an API key with its policy. The plaintext key is in this answer only. */
  "POST /console/keys": {
    body: {
      name?: string;
      /** Absent or empty: denied on every scope-protected route. '*' allows all. */
      scopes?: ("bot:send" | "bot:session:create" | "bot:events:read" | "file:read" | "file:write" | "push:send" | "tron:lease" | "jobs:read" | "ai:invoke" | "socialops:write" | "socialops:read" | "conversation:read" | "conversation:write" | "conversation:events:write" | "*")[];
      /** Absent, null or empty: any instance. */
      service_aliases?: string[] | null;
      /** Absent, null or empty: any address. */
      allowed_ips?: string[] | null;
      /** Requests per UTC day; absent: unlimited. */
      daily_quota?: number | null;
      /** Requests in any 60 s; absent: unlimited. */
      rate_limit_per_minute?: number | null;
      /** Requests in flight at once; absent: unlimited. */
      concurrency_limit?: number | null;
      expires_at?: string | null;
      /** Spend budget: units of USD 0.0001 per budget_period; send with budget_period. Absent: no budget. */
      budget_units?: number;
      /** The budget's UTC period; send with budget_units. */
      budget_period?: "day" | "month";
    };
    response: {
      data: {
        id: string;
        name: string;
        /** The start of the key's plaintext. */
        prefix: string;
        scopes: string[];
        service_aliases: string[] | null;
        allowed_ips: string[] | null;
        daily_quota: number | null;
        rate_limit_per_minute: number | null;
        concurrency_limit: number | null;
        expires_at: string | null;
        created_at: string;
        /** The spend budget's current period; null: no budget. */
        budget: {
          limit_units: number;
          /** Final charges settled in the current period. */
          spent_units: number;
          /** Held by requests in flight. */
          reserved_units: number;
          period: "day" | "month";
          /** When the current period ends (UTC). */
          resets_at: string;
        } | null;
        /** The plaintext key: shown only here. */
        key: string;
      };
    };
  };
  /** Replace the key's secret; the old one fails at once on every replica. */
  "POST /console/keys/{id}/rotate": {
    body: never;
    response: {
      data: {
        id: string;
        name: string;
        /** The start of the key's plaintext. */
        prefix: string;
        scopes: string[];
        service_aliases: string[] | null;
        allowed_ips: string[] | null;
        daily_quota: number | null;
        rate_limit_per_minute: number | null;
        concurrency_limit: number | null;
        expires_at: string | null;
        created_at: string;
        /** The spend budget's current period; null: no budget. */
        budget: {
          limit_units: number;
          /** Final charges settled in the current period. */
          spent_units: number;
          /** Held by requests in flight. */
          reserved_units: number;
          period: "day" | "month";
          /** When the current period ends (UTC). */
          resets_at: string;
        } | null;
        /** The plaintext key: shown only here. */
        key: string;
      };
    };
  };
  /** Revoke the key; it fails at once on every replica. */
  "DELETE /console/keys/{id}": {
    body: never;
    response: undefined;
  };
  /** Set or remove the key's spend budget; the next request on every replica counts against the new one. */
  "PATCH /console/keys/{id}": {
    body: {
      /** Spend budget in units per budget_period; null removes the budget. */
      budget_units: number | null;
      /** day | month (UTC); null with budget_units null. */
      budget_period: "day" | "month" | null;
    };
    response: {
      data: {
        id: string;
        name: string;
        /** The start of the key's plaintext. */
        prefix: string;
        scopes: string[];
        service_aliases: string[] | null;
        allowed_ips: string[] | null;
        daily_quota: number | null;
        rate_limit_per_minute: number | null;
        concurrency_limit: number | null;
        expires_at: string | null;
        created_at: string;
        /** The spend budget's current period; null: no budget. */
        budget: {
          limit_units: number;
          /** Final charges settled in the current period. */
          spent_units: number;
          /** Held by requests in flight. */
          reserved_units: number;
          period: "day" | "month";
          /** When the current period ends (UTC). */
          resets_at: string;
        } | null;
      };
    };
  };
  /** What the gateway recorded about one request (key, usage, audit), without prompts, answers or secrets. */
  "GET /console/requests/{request_id}": {
    body: never;
    response: {
      data: {
        request_id: string;
        key: {
          id: string;
          name: string;
          prefix: string;
        } | null;
        usage: {
          /** The gateway request id (X-Request-ID). */
          id: string;
          /** byok: recorded at the instance's own pricing, never charged to the balance. */
          mode: "managed" | "byok";
          /** The API key that made the request. */
          api_key_id: string | null;
          service_alias: string;
          model_alias: string;
          price_id: string;
          status: "reserved" | "completed" | "failed" | "review";
          reserved_units: number;
          final_units: number | null;
          usage_json: string | null;
          error_code: string | null;
          /** The API the request came through: chat_completions (OpenAI's Chat Completions, and the native chat routes built on it), messages (Anthropic's Messages), embeddings; null on records older than this field. */
          api: "chat_completions" | "messages" | "embeddings" | null;
          created_at: string;
        } | null;
        audit: {
          event_id: string;
          type: string;
          source: string;
          occurred_at: string;
          data: Record<string, unknown>;
        }[];
      };
    };
  };
  /** The tenant's account webhooks, newest first, without secrets. */
  "GET /console/webhooks": {
    body: never;
    response: {
      data: {
        id: string;
        url: string;
        events: ("budget.threshold" | "budget.reached" | "balance.low" | "key.expiring" | "ping")[];
        description: string | null;
        created_at: string;
      }[];
      /** With `limit` or `cursor`: the cursor of the next page, null at the end. */
      next_cursor?: string | null;
    };
  };
  /** Register an account webhook (tenant admin): alerts as signed POSTs, retried like job callbacks. The secret is shown once. */
  "POST /console/webhooks": {
    body: {
      /** HTTPS URL that receives the signed POSTs; loopback, private and link-local addresses are refused (as for job callbacks). */
      url: string;
      /** The events to send (a `ping` from the test route is always sent). */
      events: ("budget.threshold" | "budget.reached" | "balance.low" | "key.expiring" | "ping")[];
      description?: string;
    };
    response: {
      data: {
        id: string;
        url: string;
        events: ("budget.threshold" | "budget.reached" | "balance.low" | "key.expiring" | "ping")[];
        description: string | null;
        created_at: string;
        /** Signs every delivery (X-Service-Signature: sha256=<hex HMAC-SHA256>); shown only here. */
        secret: string;
      };
    };
  };
  /** Remove an account webhook and its deliveries. */
  "DELETE /console/webhooks/{id}": {
    body: never;
    response: undefined;
  };
  /** Send a `ping` event to the webhook (202: queued; its delivery shows in the delivery log). */
  "POST /console/webhooks/{id}/test": {
    body: never;
    response: {
      data: {
        event_id: string;
      };
    };
  };
  /** The webhook's delivery log, newest first: the latest 100, or a page at a time. */
  "GET /console/webhooks/{id}/deliveries": {
    body: never;
    response: {
      data: {
        event_id: string;
        event: "budget.threshold" | "budget.reached" | "balance.low" | "key.expiring" | "ping";
        status: "pending" | "delivered" | "exhausted";
        attempts: number;
        last_status: number | null;
        created_at: string;
      }[];
      /** With `limit` or `cursor`: the cursor of the next page, null at the end. */
      next_cursor?: string | null;
    };
  };
  /** The tenant's balance alert threshold (null: no alert). */
  "GET /console/alerts": {
    body: never;
    response: {
      data: {
        balance_low_units: number | null;
      };
    };
  };
  /** Set the balance alert threshold: `balance.low` is sent once each time the available balance falls below it (null turns it off). */
  "PUT /console/alerts": {
    body: {
      /** `balance.low` goes to the account webhooks once each time the available balance falls below this (units of USD 0.0001); null: no alert. */
      balance_low_units: number | null;
    };
    response: {
      data: {
        balance_low_units: number | null;
      };
    };
  };
  /** The calling API key (never its secret). Passes the whole key policy, so it also tells whether a call would be admitted. */
  "GET /v1/key": {
    body: never;
    response: {
      data: {
        id: string;
        name: string;
        prefix: string;
        tenant_id: string;
        scopes: string[];
      };
    };
  };
  /** The key's tenant's jobs, newest first: the newest 100, or a page at a time with `limit` and `cursor`. */
  "GET /v1/jobs": {
    body: never;
    response: {
      data: {
        id: string;
        type: string;
        status: "pending" | "running" | "succeeded" | "failed" | "canceled" | "expired";
        result: unknown | null;
        error: unknown | null;
        callback: {
          state: string;
          attempts: number;
          last_status: number | null;
        };
        created_at: string;
        updated_at: string;
      }[];
      /** With `limit` or `cursor`: the cursor of the next page, null at the end. */
      next_cursor?: string | null;
    };
  };
  /** One job of the key's tenant. */
  "GET /v1/jobs/{id}": {
    body: never;
    response: {
      data: {
        id: string;
        type: string;
        status: "pending" | "running" | "succeeded" | "failed" | "canceled" | "expired";
        result: unknown | null;
        error: unknown | null;
        callback: {
          state: string;
          attempts: number;
          last_status: number | null;
        };
        created_at: string;
        updated_at: string;
      };
    };
  };
  /** Inbound SocialOps providers this deployment understands (any valid key). */
  "GET /v1/apps/socialops/providers": {
    body: never;
    response: {
      data: {
        id: string;
        name: string;
      }[];
    };
  };
  /** The caller tenant's effective model prices: list price versions and its own discounts. */
  "GET /console/services/managed-ai/models": {
    body: never;
    response: {
      /** Every model with a published price, newest first. */
      data: {
        alias: string;
        enabled: boolean;
        /** The price version that applies to new requests. */
        price_id: string;
        /** List price, units of USD 0.0001 per million input tokens. */
        input_units_per_mtok: number;
        /** List price, units of USD 0.0001 per million output tokens. */
        output_units_per_mtok: number;
        /** The caller tenant's discount (0 without an unexpired offer); applied in the cost formula, not to these prices. */
        discount_bps: number;
      }[];
    };
  };
  /** The caller tenant's service instances of every kind, newest first; secrets shown as "[redacted]". */
  "GET /console/services": {
    body: never;
    response: {
      data: {
        id: string;
        service_id: string;
        alias: string;
        status: "active" | "disabled";
        config: Record<string, unknown>;
        /** ai-model instances: the spend budget's current period (config.budget_units per config.budget_period); null: none. */
        budget?: {
          limit_units: number;
          /** Final charges settled in the current period. */
          spent_units: number;
          /** Held by requests in flight. */
          reserved_units: number;
          period: "day" | "month";
          /** When the current period ends (UTC). */
          resets_at: string;
        } | null;
        version: number;
        created_at: string;
        updated_at: string;
        [key: string]: unknown;
      }[];
    };
  };
  /** Create or update (same alias) a service instance of the caller's tenant (service:manage): ai-model (managed or bring-your-own-key), webhook-push or socialops. */
  "POST /console/services": {
    body: {
      service_id: "ai-model";
      alias: string;
      status: "active" | "disabled";
      config: {
        mode: "managed";
        /** Model alias used when a request names none. */
        default_model: string;
        /** Model aliases this instance serves; absent: every enabled model. */
        models?: string[];
        max_tokens_per_request?: number;
        /** USD; a request whose worst case costs more gets 409. */
        max_cost_per_request?: number;
        /** Spend budget: units of USD 0.0001 per budget_period; send with budget_period. Absent: no budget. */
        budget_units?: number;
        /** The budget's UTC period; send with budget_units. */
        budget_period?: "day" | "month";
      } | {
        mode: "byok";
        provider: "openai";
        /** The provider's API base, e.g. https://api.openai.com/v1. */
        base_url: string;
        /** The provider's model used when a request names none. */
        default_model: string;
        /** The provider key (secret): stored encrypted, shown as "[redacted]". */
        api_key?: string;
        max_tokens_per_request?: number;
        /** USD; a request whose worst-case estimate at `pricing` is above it gets 409. */
        max_cost_per_request?: number;
        /** The customer's own provider prices (units per million tokens), for the cost headers, ceilings, usage records and budgets; nothing is charged. */
        pricing?: {
          input_units_per_mtok: number;
          output_units_per_mtok: number;
        };
        /** Spend budget: units of USD 0.0001 per budget_period; send with budget_period. Absent: no budget. */
        budget_units?: number;
        /** The budget's UTC period; send with budget_units. */
        budget_period?: "day" | "month";
      };
      /** byok: a connected account holding the provider key, instead of config.api_key. */
      connected_account_id?: string;
    } | {
      service_id: "webhook-push";
      alias: string;
      status: "active" | "disabled";
      config: {
        targets: ({
          id: string;
          type: "webhook";
          /** http(s) URL; refused when it resolves to a loopback, private or link-local address (unless ALLOW_PRIVATE_TARGETS). */
          url: string;
          /** Signs each body: X-Service-Signature: sha256=<hex HMAC-SHA256(secret, raw body)>. Omitted on update: kept; null: removed. */
          secret?: string | null;
          /** Default true. */
          enabled?: boolean;
        } | {
          id: string;
          type: "telegram";
          /** Omitted on update: kept (unless connected_account_id is sent). */
          bot_token?: string;
          /** A connected account (provider telegram) whose secret is the bot token. */
          connected_account_id?: string;
          chat_id: string | number;
          enabled?: boolean;
        })[];
        /** Spend budget: units of USD 0.0001 per budget_period; send with budget_period. Absent: no budget. */
        budget_units?: number;
        /** The budget's UTC period; send with budget_units. */
        budget_period?: "day" | "month";
      };
    } | {
      service_id: "socialops";
      alias: string;
      status: "active" | "disabled";
      config?: {
        /** Where replies to `generic` threads are delivered (POST, signed like push webhooks). */
        reply_webhook_url?: string | null;
        reply_webhook_secret?: string | null;
      };
    };
    response: {
      data: {
        id: string;
        service_id: string;
        alias: string;
        status: "active" | "disabled";
        config: Record<string, unknown>;
        /** ai-model instances: the spend budget's current period (config.budget_units per config.budget_period); null: none. */
        budget?: {
          limit_units: number;
          /** Final charges settled in the current period. */
          spent_units: number;
          /** Held by requests in flight. */
          reserved_units: number;
          period: "day" | "month";
          /** When the current period ends (UTC). */
          resets_at: string;
        } | null;
        version: number;
        created_at: string;
        updated_at: string;
        [key: string]: unknown;
      };
    };
  };
  /** The caller tenant's managed requests (`mode=byok`: bring-your-own-key ones, never charged; `mode=all`: both), newest first: the newest 100, or a page at a time with `limit` and `cursor`. */
  "GET /console/services/managed-ai/usage": {
    body: never;
    response: {
      data: {
        /** The gateway request id (X-Request-ID). */
        id: string;
        /** byok: recorded at the instance's own pricing, never charged to the balance. */
        mode: "managed" | "byok";
        /** The API key that made the request. */
        api_key_id: string | null;
        service_alias: string;
        model_alias: string;
        price_id: string;
        status: "reserved" | "completed" | "failed" | "review";
        reserved_units: number;
        final_units: number | null;
        usage_json: string | null;
        error_code: string | null;
        /** The API the request came through: chat_completions (OpenAI's Chat Completions, and the native chat routes built on it), messages (Anthropic's Messages), embeddings; null on records older than this field. */
        api: "chat_completions" | "messages" | "embeddings" | null;
        created_at: string;
      }[];
      /** With `limit` or `cursor`: the cursor of the next page, null at the end. */
      next_cursor?: string | null;
    };
  };
  /** The latest 200 managed requests (settlements) of every tenant. */
  "GET /ops/ai/requests": {
    body: never;
    response: {
      data: {
        /** The gateway request id (X-Request-ID). */
        id: string;
        /** byok: recorded at the instance's own pricing, never charged to the balance. */
        mode: "managed" | "byok";
        /** The API key that made the request. */
        api_key_id: string | null;
        service_alias: string;
        model_alias: string;
        price_id: string;
        status: "reserved" | "completed" | "failed" | "review";
        reserved_units: number;
        final_units: number | null;
        usage_json: string | null;
        error_code: string | null;
        /** The API the request came through: chat_completions (OpenAI's Chat Completions, and the native chat routes built on it), messages (Anthropic's Messages), embeddings; null on records older than this field. */
        api: "chat_completions" | "messages" | "embeddings" | null;
        created_at: string;
        tenant_id: string;
        stream: boolean;
        discount_bps: number;
        hold_expires_at: string;
        refunded_units: number | null;
        release_reason: string | null;
        released_by: string | null;
        updated_at: string;
      }[];
    };
  };
  /** Release a review request, or a reserved one past its hold's expiry: the hold is refunded and the request fails. Audited with the reason. */
  "POST /ops/ai/requests/{id}/release": {
    body: {
      reason: string;
    };
    response: {
      data: {
        id: string;
        status: "failed";
        refunded: number;
      };
    };
  };
  /** Capture a review request, or a reserved one past its hold's expiry: `units` (at most the reservation) are charged, the rest of the hold is refunded, and the request completes. Audited with the reason. */
  "POST /ops/ai/requests/{id}/capture": {
    body: {
      /** Units of USD 0.0001 to charge: at most the request's reserved_units (more is 422); the rest of the hold is refunded. */
      units: number;
      reason: string;
    };
    response: {
      data: {
        id: string;
        status: "completed";
        final_units: number;
        refunded: number;
      };
    };
  };
  /** Chat completion (OpenAI-compatible), JSON or server-sent events; metered on managed instances, the customer's provider on byok ones. */
  "POST /v1/apps/ai/{alias}/v1/chat/completions": {
    body: {
      /** Roles system, developer, user (text and image_url parts), assistant (tool_calls, refusal; content null with tool_calls) and tool (tool_call_id). */
      messages: {
        role: string;
        content: unknown;
        [key: string]: unknown;
      }[];
      /** Model alias; default: the instance's default_model. */
      model?: string;
      max_tokens?: number;
      /** USD ceiling: a request whose worst-case cost is above it gets 409. */
      max_cost?: number;
      stream?: boolean;
      [key: string]: unknown;
    };
    response: {
      id: string;
      object: string;
      model: string;
      choices: unknown[];
      usage: unknown;
      [key: string]: unknown;
    };
  };
  /** The instance's models (OpenAI-compatible listing). */
  "GET /v1/apps/ai/{alias}/v1/models": {
    body: never;
    response: {
      object: "list";
      data: {
        id: string;
        object: "model";
        created: number;
        owned_by: string;
      }[];
    };
  };
  /** Upload a file: the raw body, streamed (scope file:write). */
  "PUT /v1/apps/file/upload": {
    body: never;
    response: {
      data: {
        id: string;
        filename: string;
        size: number;
        /** Hex SHA-256 of the bytes, computed while they streamed in. */
        sha256: string;
        expires_at: string | null;
        /** null: unlimited. */
        max_downloads: number | null;
        /** Public, unguessable; null once the file is removed. */
        download_url: string | null;
        share_url: string | null;
        content_type: string;
        created_at: string;
      };
    };
  };
  /** Upload a file (POST, for legacy clients; same as PUT). */
  "POST /v1/apps/file/upload": {
    body: never;
    response: {
      data: {
        id: string;
        filename: string;
        size: number;
        /** Hex SHA-256 of the bytes, computed while they streamed in. */
        sha256: string;
        expires_at: string | null;
        /** null: unlimited. */
        max_downloads: number | null;
        /** Public, unguessable; null once the file is removed. */
        download_url: string | null;
        share_url: string | null;
        content_type: string;
        created_at: string;
      };
    };
  };
  /** The key's tenant's files, newest first (scope file:read): the newest 100, or a page at a time with `limit` and `cursor`. */
  "GET /v1/apps/file/list": {
    body: never;
    response: {
      data: {
        id: string;
        filename: string;
        size: number;
        /** Hex SHA-256 of the bytes, computed while they streamed in. */
        sha256: string;
        content_type: string;
        created_at: string;
        expires_at: string | null;
        /** null: unlimited. */
        max_downloads: number | null;
        downloads: number;
        status: "available" | "expired" | "exhausted";
        /** Public, unguessable; null once the file is removed. */
        download_url: string | null;
        share_url: string | null;
      }[];
      /** With `limit` or `cursor`: the cursor of the next page, null at the end. */
      next_cursor?: string | null;
    };
  };
  /** Download a shared file by its token (public; counted; unknown, expired and exhausted answer 404). */
  "GET /v1/apps/file/download/{token}": {
    body: never;
    response: string;
  };
  /** A shared file's metadata by token (public; JSON, or an HTML page for browsers). */
  "GET /v1/apps/file/share/{token}": {
    body: never;
    response: {
      data: {
        filename: string;
        size: number;
        sha256: string;
        content_type: string;
        created_at: string;
        expires_at: string | null;
        /** null: unlimited. */
        downloads_remaining: number | null;
        download_url: string;
      };
    };
  };
  /** The caller tenant's file storage quota and what its files use. */
  "GET /console/files/quota": {
    body: never;
    response: {
      data: {
        /** Bytes the tenant's files may hold together. */
        bytes_limit: number;
        /** Bytes its stored files hold (until the sweeper removes an expired or used-up file). */
        bytes_used: number;
        /** Files the tenant may keep at once. */
        files_limit: number;
        files_used: number;
      };
    };
  };
  /** A tenant's file storage quota and usage (operators). */
  "GET /ops/files/tenants/{tenant_id}/quota": {
    body: never;
    response: {
      data: {
        /** Bytes the tenant's files may hold together. */
        bytes_limit: number;
        /** Bytes its stored files hold (until the sweeper removes an expired or used-up file). */
        bytes_used: number;
        /** Files the tenant may keep at once. */
        files_limit: number;
        files_used: number;
        tenant_id: string;
      };
    };
  };
  /** Set a tenant's own file storage limits, or return them to the default with null (platform_admin). A limit below the usage keeps the files and refuses new uploads. */
  "PUT /ops/files/tenants/{tenant_id}/quota": {
    body: {
      /** Bytes the tenant's files may hold together for this tenant; null: back to the service's default; absent: unchanged. */
      bytes_quota?: number | null;
      /** Files the tenant may keep at once for this tenant; null: back to the service's default; absent: unchanged. */
      files_quota?: number | null;
    };
    response: {
      data: {
        /** Bytes the tenant's files may hold together. */
        bytes_limit: number;
        /** Bytes its stored files hold (until the sweeper removes an expired or used-up file). */
        bytes_used: number;
        /** Files the tenant may keep at once. */
        files_limit: number;
        files_used: number;
        tenant_id: string;
      };
    };
  };
  /** Send a push message to every enabled target of an instance, in parallel; charged per delivered target. */
  "POST /v1/apps/webhook-push/{alias}/send": {
    body: {
      title: string;
      text: string;
    };
    response: {
      data: {
        message_id: string;
        results: {
          target_id: string;
          ok: boolean;
          /** The target's HTTP status; null when no answer came. */
          status: number | null;
          /** Why it was not delivered (`timeout`, `http_500`, `private_address`, `telegram_not_ok`, ...); null when delivered. */
          error: string | null;
        }[];
        charged_units: number;
      };
    };
  };
  /** The delivery log of a webhook-push instance of the caller's tenant: messages newest first, each with every target's outcome. */
  "GET /console/services/webhook-push/{alias}/messages": {
    body: never;
    response: {
      data: {
        id: string;
        status: "sending" | "delivered" | "partial" | "failed";
        charged_units: number;
        created_at: string;
        settled_at: string | null;
        /** The enabled targets of the send, in target order (no title or text is kept in the log). */
        deliveries: {
          target_id: string;
          type: "webhook" | "telegram";
          /** null while the outcome is unknown. */
          ok: boolean | null;
          /** The target's HTTP status; null when no answer came. */
          status: number | null;
          /** Why it was not delivered (`timeout`, `http_500`, ...); null when delivered. */
          error: string | null;
          finished_at: string | null;
        }[];
      }[];
    };
  };
  /** Ingest a provider event; stored once per event_id (a repeat answers the same ids with duplicate: true). */
  "POST /v1/apps/socialops/{alias}/webhook/{provider}": {
    body: {
      /** The provider's event id: the same id again is stored once. */
      event_id: string;
      /** The provider's thread id. */
      thread_id: string;
      subject: string;
      text: string;
      author?: string;
    };
    response: {
      data: {
        thread_id: string;
        message_id: string;
        /** Present (true) when the event had been received before. */
        duplicate?: boolean;
      };
    };
  };
  /** Threads with unread counts, newest activity first. */
  "GET /v1/apps/socialops/{alias}/inbox": {
    body: never;
    response: {
      data: {
        id: string;
        provider: string;
        external_thread_id: string;
        subject: string;
        /** Inbound messages since the last reply. */
        unread_count: number;
        message_count: number;
        last_activity_at: string;
        created_at: string;
      }[];
      /** With `limit` or `cursor`: the cursor of the next page, null at the end. */
      next_cursor?: string | null;
    };
  };
  /** The instance's threads: the 100 with the newest activity; with `limit` or `cursor`, a page at a time, newest first by creation (so new activity never moves a thread between pages). */
  "GET /v1/apps/socialops/{alias}/threads": {
    body: never;
    response: {
      data: {
        id: string;
        provider: string;
        external_thread_id: string;
        subject: string;
        /** Inbound messages since the last reply. */
        unread_count: number;
        message_count: number;
        last_activity_at: string;
        created_at: string;
      }[];
      /** With `limit` or `cursor`: the cursor of the next page, null at the end. */
      next_cursor?: string | null;
    };
  };
  /** A thread's messages, oldest first (the first 500, or a page at a time with `limit` and `cursor`); replies carry their delivery state. */
  "GET /v1/apps/socialops/{alias}/threads/{thread_id}/messages": {
    body: never;
    response: {
      data: {
        id: string;
        thread_id: string;
        direction: "inbound" | "outbound";
        event_id: string | null;
        author: string | null;
        text: string;
        created_at: string;
        /** Replies only. */
        delivery: {
          state: "queued" | "delivered" | "failed";
          attempts: number;
          last_status: number | null;
          error: string | null;
          delivered_at: string | null;
        } | null;
      }[];
      /** With `limit` or `cursor`: the cursor of the next page, null at the end. */
      next_cursor?: string | null;
    };
  };
  /** Queue a reply (202); it is delivered asynchronously and its delivery state shows on the message. */
  "POST /v1/apps/socialops/{alias}/threads/{thread_id}/replies": {
    body: {
      text: string;
    };
    response: {
      data: {
        message_id: string;
        status: "queued";
      };
    };
  };
  /** The tenant's connected accounts, newest first, without secrets. */
  "GET /console/connected-accounts": {
    body: never;
    response: {
      data: {
        id: string;
        provider: string;
        name: string;
        created_at: string;
      }[];
    };
  };
  /** Store a provider credential for the tenant (service:manage); encrypted at rest, never returned. */
  "POST /console/connected-accounts": {
    body: {
      provider: string;
      name: string;
      /** The credential (provider key, bot token): stored encrypted, never returned. */
      secret: string;
    };
    response: {
      data: {
        id: string;
        provider: string;
        name: string;
        created_at: string;
      };
    };
  };
  /** Delete a connected account (service:manage); 409 while an ai-model instance uses it. */
  "DELETE /console/connected-accounts/{id}": {
    body: never;
    response: undefined;
  };
  /** Chat (native shape, spec 2.5 body): `{data: {id, model, content, finish_reason, usage}}`. */
  "POST /v1/apps/ai/{alias}/chat": {
    body: {
      /** Roles system, developer, user (text and image_url parts), assistant (tool_calls, refusal; content null with tool_calls) and tool (tool_call_id). */
      messages: {
        role: string;
        content: unknown;
        [key: string]: unknown;
      }[];
      /** Model alias; default: the instance's default_model. */
      model?: string;
      max_tokens?: number;
      /** USD ceiling: a request whose worst-case cost is above it gets 409. */
      max_cost?: number;
      stream?: boolean;
      [key: string]: unknown;
    };
    response: {
      data: {
        id: string;
        model: string;
        content: string | null;
        finish_reason: string | null;
        usage: {
          prompt_tokens: number;
          completion_tokens: number;
          total_tokens: number;
        } | null;
      };
    };
  };
  /** Chat as server-sent events: `{"delta": "..."}`, then `{"finish_reason", "usage"}`, then `[DONE]`. */
  "POST /v1/apps/ai/{alias}/chat/stream": {
    body: {
      /** Roles system, developer, user (text and image_url parts), assistant (tool_calls, refusal; content null with tool_calls) and tool (tool_call_id). */
      messages: {
        role: string;
        content: unknown;
        [key: string]: unknown;
      }[];
      /** Model alias; default: the instance's default_model. */
      model?: string;
      max_tokens?: number;
      /** USD ceiling: a request whose worst-case cost is above it gets 409. */
      max_cost?: number;
      stream?: boolean;
      [key: string]: unknown;
    };
    response: string;
  };
  /** Embeddings (native shape): `{data: {model, embeddings, usage}}`. */
  "POST /v1/apps/ai/{alias}/embeddings": {
    body: {
      input: string | string[];
      model?: string;
      /** USD ceiling: a request whose worst-case cost is above it gets 409. */
      max_cost?: number;
    };
    response: {
      data: {
        model: string;
        embeddings: number[][];
        usage: {
          prompt_tokens: number;
          total_tokens: number;
        } | null;
      };
    };
  };
  /** Embeddings (OpenAI-compatible). */
  "POST /v1/apps/ai/{alias}/v1/embeddings": {
    body: {
      /** A string, strings, a token array or token arrays. */
      input: unknown;
      model?: string;
      max_cost?: number;
      [key: string]: unknown;
    };
    response: {
      object: "list";
      data: unknown[];
      model: string;
      usage: unknown;
      [key: string]: unknown;
    };
  };
  /** Anthropic's Messages API (JSON, or Anthropic's server-sent events); metered as the chat route on managed instances, the customer's provider on byok ones. */
  "POST /v1/apps/ai/{alias}/v1/messages": {
    body: {
      /** The model alias (as on the chat route). */
      model: string;
      /** The output cap; above the instance's max_tokens_per_request or the model's max_output_tokens: 400. */
      max_tokens: number;
      system?: string | {
        type: string;
        [key: string]: unknown;
      }[];
      /** Content blocks text, image (base64 or url source), tool_use (assistant) and tool_result (user); a system turn among them is a system message. */
      messages: {
        role: "user" | "assistant" | "system";
        content: string | {
          type: string;
          [key: string]: unknown;
        }[];
      }[];
      tools?: {
        name: string;
        description?: string;
        input_schema: Record<string, unknown>;
        [key: string]: unknown;
      }[];
      tool_choice?: {
        type: "auto" | "any" | "tool" | "none";
        [key: string]: unknown;
      };
      stop_sequences?: string[];
      temperature?: number;
      top_p?: number;
      /** Accepted and not forwarded (the chat API has none). */
      top_k?: number;
      stream?: boolean;
      /** Accepted and not forwarded. */
      metadata?: {
        user_id?: string | null;
      };
      /** Accepted and not forwarded: reasoning stays within max_tokens. */
      thinking?: {
        type: string;
        [key: string]: unknown;
      };
    };
    response: {
      /** msg_ and the request's X-Request-ID without its req_ prefix. */
      id: string;
      type: "message";
      role: "assistant";
      model: string;
      content: ({
        type: "text";
        text: string;
      } | {
        type: "tool_use";
        id: string;
        name: string;
        input: Record<string, unknown>;
      })[];
      stop_reason: "end_turn" | "max_tokens" | "stop_sequence" | "tool_use";
      stop_sequence: string | null;
      /** The provider's reported usage: what the charge is computed from. */
      usage: {
        input_tokens: number;
        output_tokens: number;
      };
    };
  };
  /** Anthropic's token count of a Messages request: the gateway's upper bound (CONTRACT.md 6b), not metered. */
  "POST /v1/apps/ai/{alias}/v1/messages/count_tokens": {
    body: {
      /** The model alias (as on the chat route). */
      model: string;
      /** Ignored. */
      max_tokens?: number;
      system?: string | {
        type: string;
        [key: string]: unknown;
      }[];
      /** Content blocks text, image (base64 or url source), tool_use (assistant) and tool_result (user); a system turn among them is a system message. */
      messages: {
        role: "user" | "assistant" | "system";
        content: string | {
          type: string;
          [key: string]: unknown;
        }[];
      }[];
      tools?: {
        name: string;
        description?: string;
        input_schema: Record<string, unknown>;
        [key: string]: unknown;
      }[];
      tool_choice?: {
        type: "auto" | "any" | "tool" | "none";
        [key: string]: unknown;
      };
      stop_sequences?: string[];
      temperature?: number;
      top_p?: number;
      /** Accepted and not forwarded (the chat API has none). */
      top_k?: number;
      stream?: boolean;
      /** Accepted and not forwarded. */
      metadata?: {
        user_id?: string | null;
      };
      /** Accepted and not forwarded: reasoning stays within max_tokens. */
      thinking?: {
        type: string;
        [key: string]: unknown;
      };
    };
    response: {
      /** The gateway's upper bound of the input tokens (CONTRACT.md 6b), what a call's reservation counts; not metered. */
      input_tokens: number;
    };
  };
  /** Users with their tenant and roles, newest first (latest 200): whom to credit, discount or grant a platform role. */
  "GET /ops/users": {
    body: never;
    response: {
      /** Newest first, at most 200. */
      data: {
        id: string;
        email: string;
        name: string | null;
        tenant_id: string;
        tenant_name: string;
        tenant_role: "owner" | "admin" | "member";
        platform_role: "platform_admin" | "admin" | "finance" | null;
        created_at: string;
      }[];
    };
  };
  /** Create a bot instance (its chats are opened by widget sessions). */
  "POST /v1/apps/bot": {
    body: {
      name: string;
      welcome_message?: string;
    };
    response: {
      data: {
        id: string;
        name: string;
        welcome_message: string | null;
        created_at: string;
      };
    };
  };
  /** The tenant's bot chats, newest first (at most 100). */
  "GET /v1/apps/bot/chats": {
    body: never;
    response: {
      data: {
        id: string;
        bot_id: string | null;
        visitor_id: string;
        display_name: string | null;
        /** The conversation this chat is a channel of, if any. */
        conversation_id: string | null;
        last_message_at: string | null;
        created_at: string;
      }[];
    };
  };
  /** A chat's messages in the order they were written (oldest first); page on with `after`. */
  "GET /v1/apps/bot/chats/{chatId}/messages": {
    body: never;
    response: {
      data: {
        id: string;
        chat_id: string;
        author: "bot" | "visitor";
        kind: "text" | "file";
        /** The text, or a file message's caption; null once deleted. */
        text: string | null;
        /** A file of the files service (file messages). */
        file_id: string | null;
        reply_to_message_id: string | null;
        deleted: boolean;
        edited_at: string | null;
        created_at: string;
      }[];
    };
  };
  /** The bot writes a text message into a chat (optionally quoting a message of it). */
  "POST /v1/apps/bot/messages/reply": {
    body: {
      chat_id: string;
      text: string;
      reply_to_message_id?: string;
    };
    response: {
      data: {
        id: string;
        chat_id: string;
        author: "bot" | "visitor";
        kind: "text" | "file";
        /** The text, or a file message's caption; null once deleted. */
        text: string | null;
        /** A file of the files service (file messages). */
        file_id: string | null;
        reply_to_message_id: string | null;
        deleted: boolean;
        edited_at: string | null;
        created_at: string;
      };
    };
  };
  /** The bot sends a file (an id from the files service) with an optional caption. */
  "POST /v1/apps/bot/messages/file": {
    body: {
      chat_id: string;
      file_id: string;
      caption?: string;
      reply_to_message_id?: string;
    };
    response: {
      data: {
        id: string;
        chat_id: string;
        author: "bot" | "visitor";
        kind: "text" | "file";
        /** The text, or a file message's caption; null once deleted. */
        text: string | null;
        /** A file of the files service (file messages). */
        file_id: string | null;
        reply_to_message_id: string | null;
        deleted: boolean;
        edited_at: string | null;
        created_at: string;
      };
    };
  };
  /** Delete a message (the bot's or a visitor's); it stays in the history as deleted, without content. */
  "DELETE /v1/apps/bot/messages/{messageId}": {
    body: never;
    response: undefined;
  };
  /** Edit one of the bot's messages (text, or a file message's caption). */
  "PATCH /v1/apps/bot/messages/{messageId}": {
    body: {
      text: string;
    };
    response: {
      data: {
        id: string;
        chat_id: string;
        author: "bot" | "visitor";
        kind: "text" | "file";
        /** The text, or a file message's caption; null once deleted. */
        text: string | null;
        /** A file of the files service (file messages). */
        file_id: string | null;
        reply_to_message_id: string | null;
        deleted: boolean;
        edited_at: string | null;
        created_at: string;
      };
    };
  };
  /** A chat action: typing or read signals for the widget, or `end` (ends the chat's widget sessions at once). */
  "POST /v1/apps/bot/chats/{chatId}/actions": {
    body: {
      /** `typing` and `read` are shown by the widget; `end` ends the chat's widget sessions at once. */
      action: "typing" | "read" | "end";
    };
    response: {
      data: {
        chat_id: string;
        action: string;
        event_id: string;
      };
    };
  };
  /** Open a widget session for a visitor (server side, with an API key): a short-lived widget token and a one-use refresh token. */
  "POST /v1/apps/bot/widget/auth": {
    body: {
      /** Your stable id for the visitor; the same visitor gets the same chat back. */
      visitor_id: string;
      display_name?: string;
      /** The bot the chat is with (optional). */
      bot_id?: string;
    };
    response: {
      data: {
        /** Widget access token (JWT, at most 15 minutes); only widget routes accept it. Send as Authorization: Bearer. */
        token: string;
        /** One use only; presenting a used one ends the session. */
        refresh_token: string;
        token_type: "Bearer";
        expires_in: number;
        chat_id: string;
        session_id: string;
        conversation_id: string | null;
      };
    };
  };
  /** Exchange a widget refresh token (no other credential) for a new pair. Each works once; reuse ends the session. */
  "POST /v1/apps/bot/widget/refresh": {
    body: {
      refresh_token: string;
    };
    response: {
      data: {
        /** Widget access token (JWT, at most 15 minutes); only widget routes accept it. Send as Authorization: Bearer. */
        token: string;
        /** One use only; presenting a used one ends the session. */
        refresh_token: string;
        token_type: "Bearer";
        expires_in: number;
        chat_id: string;
        session_id: string;
        conversation_id: string | null;
      };
    };
  };
  /** End the widget session of the token: its access and refresh tokens stop working at once, on every replica. */
  "POST /v1/apps/bot/widget/revoke": {
    body: never;
    response: undefined;
  };
  /** Introspect the widget token: 200 with its session, chat and expiry while it is valid, else 401 (docs/decisions/0120). */
  "POST /v1/apps/bot/widget/token": {
    body: never;
    response: {
      data: {
        session_id: string;
        chat_id: string;
        visitor_id: string;
        conversation_id: string | null;
        /** When this access token expires. */
        expires_at: string;
      };
    };
  };
  /** Widget events after a cursor, in commit order. A widget token sees its own chat; an API key with bot:events:read sees every chat of its tenant. Paging on from next_cursor never skips or repeats an event. */
  "GET /v1/apps/bot/widget/events": {
    body: never;
    response: {
      data: {
        events: {
          /** Stable event id (also X-Service-Event-Id of webhook deliveries). */
          id: string;
          /** This event's position; pass it as `cursor` to continue after it. */
          cursor: string;
          type: string;
          chat_id: string | null;
          conversation_id: string | null;
          data: unknown;
          created_at: string;
        }[];
        next_cursor: string;
      };
    };
  };
  /** The visitor's chat history, oldest first (widget token). */
  "GET /v1/apps/bot/widget/messages": {
    body: never;
    response: {
      data: {
        id: string;
        chat_id: string;
        author: "bot" | "visitor";
        kind: "text" | "file";
        /** The text, or a file message's caption; null once deleted. */
        text: string | null;
        /** A file of the files service (file messages). */
        file_id: string | null;
        reply_to_message_id: string | null;
        deleted: boolean;
        edited_at: string | null;
        created_at: string;
      }[];
    };
  };
  /** The visitor writes into their chat: text, or a file id with an optional caption (widget token). */
  "POST /v1/apps/bot/widget/messages": {
    body: {
      text?: string;
      file_id?: string;
    };
    response: {
      data: {
        id: string;
        chat_id: string;
        author: "bot" | "visitor";
        kind: "text" | "file";
        /** The text, or a file message's caption; null once deleted. */
        text: string | null;
        /** A file of the files service (file messages). */
        file_id: string | null;
        reply_to_message_id: string | null;
        deleted: boolean;
        edited_at: string | null;
        created_at: string;
      };
    };
  };
  /** Open a conversation, optionally with its first participants. */
  "POST /v1/conversations": {
    body: {
      subject?: string;
      /** Your own data (a JSON object, at most 16 KiB); replaced whole on update. */
      metadata?: Record<string, unknown>;
      participants?: {
        kind: "visitor" | "agent" | "bot" | "external";
        /** Your id of the person or system (unique per kind within a conversation). */
        external_id: string;
        display_name?: string;
        /** Default member. */
        role?: "member" | "owner" | "observer";
      }[];
    };
    response: {
      data: {
        id: string;
        subject: string | null;
        status: "open" | "pending" | "closed";
        metadata: Record<string, unknown>;
        /** Counts every change; send it back on PATCH to detect concurrent edits (409). */
        version: number;
        participants: {
          id: string;
          conversation_id: string;
          kind: "visitor" | "agent" | "bot" | "external";
          external_id: string;
          display_name: string | null;
          role: "member" | "owner" | "observer";
          created_at: string;
          updated_at: string;
        }[];
        channels: {
          id: string;
          conversation_id: string;
          type: "bot_chat" | "socialops" | "external";
          ref: string;
          created_at: string;
        }[];
        last_activity_at: string;
        created_at: string;
        updated_at: string;
      };
    };
  };
  /** The tenant's conversations, most recent activity first (optionally of one status). */
  "GET /v1/conversations/inbox": {
    body: never;
    response: {
      data: {
        id: string;
        subject: string | null;
        status: "open" | "pending" | "closed";
        metadata: Record<string, unknown>;
        /** Counts every change; send it back on PATCH to detect concurrent edits (409). */
        version: number;
        participants: {
          id: string;
          conversation_id: string;
          kind: "visitor" | "agent" | "bot" | "external";
          external_id: string;
          display_name: string | null;
          role: "member" | "owner" | "observer";
          created_at: string;
          updated_at: string;
        }[];
        channels: {
          id: string;
          conversation_id: string;
          type: "bot_chat" | "socialops" | "external";
          ref: string;
          created_at: string;
        }[];
        last_activity_at: string;
        created_at: string;
        updated_at: string;
      }[];
    };
  };
  /** Conversation events after a cursor, in commit order; paging on from next_cursor never skips or repeats an event. */
  "GET /v1/conversations/events": {
    body: never;
    response: {
      data: {
        events: {
          /** Stable event id (also X-Service-Event-Id of webhook deliveries). */
          id: string;
          /** This event's position; pass it as `cursor` to continue after it. */
          cursor: string;
          type: string;
          chat_id: string | null;
          conversation_id: string | null;
          data: unknown;
          created_at: string;
        }[];
        next_cursor: string;
      };
    };
  };
  /** The tenant's conversation webhooks, newest first; secrets redacted. */
  "GET /v1/conversations/webhooks": {
    body: never;
    response: {
      data: {
        id: string;
        url: string;
        secret: "[redacted]";
        event_types: string[];
        status: "active" | "revoked";
        created_at: string;
        revoked_at: string | null;
      }[];
    };
  };
  /** Register a webhook for conversation events: each is POSTed as JSON, signed (X-Service-Signature: sha256=<hex HMAC-SHA256(secret, body)>, X-Service-Event-Id), retried with backoff up to 8 attempts. */
  "POST /v1/conversations/webhooks": {
    body: {
      /** HTTPS URL on a public address. */
      url: string;
      /** Signs every delivery (X-Service-Signature); stored encrypted, never returned. */
      secret: string;
      /** Only these kinds; absent or empty: all. */
      event_types?: ("conversation.created" | "conversation.updated" | "participant.added" | "participant.updated" | "participant.removed" | "channel.added" | "channel.updated" | "channel.removed" | "widget_session.created" | "message.created" | "message.updated" | "message.deleted")[];
    };
    response: {
      data: {
        id: string;
        url: string;
        secret: "[redacted]";
        event_types: string[];
        status: "active" | "revoked";
        created_at: string;
        revoked_at: string | null;
      };
    };
  };
  /** Revoke a webhook: nothing more is sent to it; its pending deliveries are canceled. */
  "DELETE /v1/conversations/webhooks/{webhookId}": {
    body: never;
    response: undefined;
  };
  /** Deliver again the events after a cursor (with their original event ids), at most 1000 per call; continue from next_cursor. */
  "POST /v1/conversations/webhooks/{webhookId}/replay": {
    body: {
      /** Replay the events after this cursor; absent: from the start. */
      cursor?: string;
      /** At most this many events (default and maximum 1000); continue from next_cursor. */
      limit?: number;
    };
    response: {
      data: {
        webhook_id: string;
        from_cursor: string;
        next_cursor: string;
        queued: number;
      };
    };
  };
  /** The webhook's latest 100 deliveries, newest first: state, attempts, last status. */
  "GET /v1/conversations/webhooks/{webhookId}/deliveries": {
    body: never;
    response: {
      data: {
        id: string;
        webhook_id: string;
        event_id: string;
        event_type: string;
        cursor: string;
        state: "pending" | "delivered" | "exhausted" | "canceled";
        attempts: number;
        last_status: number | null;
        last_error: string | null;
        replay: boolean;
        next_attempt_at: string | null;
        created_at: string;
        updated_at: string;
      }[];
    };
  };
  /** One conversation with its participants and channels. */
  "GET /v1/conversations/{id}": {
    body: never;
    response: {
      data: {
        id: string;
        subject: string | null;
        status: "open" | "pending" | "closed";
        metadata: Record<string, unknown>;
        /** Counts every change; send it back on PATCH to detect concurrent edits (409). */
        version: number;
        participants: {
          id: string;
          conversation_id: string;
          kind: "visitor" | "agent" | "bot" | "external";
          external_id: string;
          display_name: string | null;
          role: "member" | "owner" | "observer";
          created_at: string;
          updated_at: string;
        }[];
        channels: {
          id: string;
          conversation_id: string;
          type: "bot_chat" | "socialops" | "external";
          ref: string;
          created_at: string;
        }[];
        last_activity_at: string;
        created_at: string;
        updated_at: string;
      };
    };
  };
  /** Change subject, status or metadata; `version`, when sent, must be the current one (else 409). */
  "PATCH /v1/conversations/{id}": {
    body: {
      subject?: string | null;
      status?: "open" | "pending" | "closed";
      /** Your own data (a JSON object, at most 16 KiB); replaced whole on update. */
      metadata?: Record<string, unknown>;
      version?: number;
    };
    response: {
      data: {
        id: string;
        subject: string | null;
        status: "open" | "pending" | "closed";
        metadata: Record<string, unknown>;
        /** Counts every change; send it back on PATCH to detect concurrent edits (409). */
        version: number;
        participants: {
          id: string;
          conversation_id: string;
          kind: "visitor" | "agent" | "bot" | "external";
          external_id: string;
          display_name: string | null;
          role: "member" | "owner" | "observer";
          created_at: string;
          updated_at: string;
        }[];
        channels: {
          id: string;
          conversation_id: string;
          type: "bot_chat" | "socialops" | "external";
          ref: string;
          created_at: string;
        }[];
        last_activity_at: string;
        created_at: string;
        updated_at: string;
      };
    };
  };
  /** Add a participant (a kind and your external id, unique within the conversation). */
  "POST /v1/conversations/{id}/participants": {
    body: {
      kind: "visitor" | "agent" | "bot" | "external";
      /** Your id of the person or system (unique per kind within a conversation). */
      external_id: string;
      display_name?: string;
      /** Default member. */
      role?: "member" | "owner" | "observer";
    };
    response: {
      data: {
        id: string;
        conversation_id: string;
        kind: "visitor" | "agent" | "bot" | "external";
        external_id: string;
        display_name: string | null;
        role: "member" | "owner" | "observer";
        created_at: string;
        updated_at: string;
      };
    };
  };
  /** Remove a participant. */
  "DELETE /v1/conversations/{id}/participants/{participantId}": {
    body: never;
    response: undefined;
  };
  /** Change a participant's role or display name. */
  "PATCH /v1/conversations/{id}/participants/{participantId}": {
    body: {
      display_name?: string | null;
      role?: "member" | "owner" | "observer";
    };
    response: {
      data: {
        id: string;
        conversation_id: string;
        kind: "visitor" | "agent" | "bot" | "external";
        external_id: string;
        display_name: string | null;
        role: "member" | "owner" | "observer";
        created_at: string;
        updated_at: string;
      };
    };
  };
  /** Attach a channel: a bot chat (its messages then appear on the conversation feed), a SocialOps thread, or an external reference. */
  "POST /v1/conversations/{id}/channels": {
    body: {
      type: "bot_chat" | "socialops" | "external";
      /** bot_chat: a chat id of your bot; socialops: a thread id; external: your reference. */
      ref: string;
    };
    response: {
      data: {
        id: string;
        conversation_id: string;
        type: "bot_chat" | "socialops" | "external";
        ref: string;
        created_at: string;
      };
    };
  };
  /** Detach a channel; a bot_chat channel's chat leaves the conversation (its later messages no longer reach the conversation feed). */
  "DELETE /v1/conversations/{id}/channels/{channelId}": {
    body: never;
    response: undefined;
  };
  /** Point a channel at another reference (a bot_chat channel's old chat leaves the conversation, the new one joins it). */
  "PATCH /v1/conversations/{id}/channels/{channelId}": {
    body: {
      /** Absent: the channel keeps its type. */
      type?: "bot_chat" | "socialops" | "external";
      /** bot_chat: a chat id of your bot; socialops: a thread id; external: your reference. */
      ref: string;
    };
    response: {
      data: {
        id: string;
        conversation_id: string;
        type: "bot_chat" | "socialops" | "external";
        ref: string;
        created_at: string;
      };
    };
  };
  /** Open a widget session in a conversation: the visitor's chat becomes its channel and the visitor a participant. */
  "POST /v1/conversations/{id}/widget-session": {
    body: {
      visitor_id: string;
      display_name?: string;
    };
    response: {
      data: {
        /** Widget access token (JWT, at most 15 minutes); only widget routes accept it. Send as Authorization: Bearer. */
        token: string;
        /** One use only; presenting a used one ends the session. */
        refresh_token: string;
        token_type: "Bearer";
        expires_in: number;
        chat_id: string;
        session_id: string;
        conversation_id: string | null;
      };
    };
  };
  /** The widget sessions opened in a conversation, newest first, live and ended (no tokens). */
  "GET /v1/conversations/{id}/widget-sessions": {
    body: never;
    response: {
      data: {
        id: string;
        chat_id: string;
        visitor_id: string;
        display_name: string | null;
        /** live until revoked, ended by a refresh token's reuse, or by the chat's `end` action. */
        status: "live" | "ended";
        ended_at: string | null;
        ended_reason: "revoked" | "refresh_reuse" | "chat_ended" | null;
        created_at: string;
      }[];
    };
  };
  /** Prices an energy lease; the quote can be used until expires_at. */
  "POST /v1/apps/tron/quote": {
    body: {
      /** TRON address of the account that receives the energy (base58check, T...). */
      receiver: string;
      energy: number;
      duration_seconds: number;
    };
    response: {
      data: {
        quote_id: string;
        receiver: string;
        energy: number;
        duration_seconds: number;
        /** USD. */
        cost: number;
        /** Units of USD 0.0001. */
        cost_units: number;
        expires_at: string;
        /** The energy rental provider in use (`generic`, `itrx`). */
        provider: string;
        /** The provider's rental period the lease will be ordered for: the smallest that covers duration_seconds (itrx: 1H, 1D..30D). Null when the provider takes the duration as is. */
        provider_period: {
          name: string;
          seconds: number;
        } | null;
      };
    };
  };
  /** Creates an energy lease from a quote, as an asynchronous job (202). */
  "POST /v1/apps/tron/lease": {
    body: {
      quote_id: string;
      /** USD ceiling: a quote whose cost is above it gets 409. */
      max_cost: number;
      /** TRON address of the account that receives the energy (base58check, T...). */
      receiver: string;
      energy: number;
      duration_seconds: number;
      /** HTTPS URL that receives signed `job.updated` callbacks (live mode only). */
      callback_url?: string;
      /** HMAC-SHA256 key of X-Service-Signature; required with callback_url. */
      callback_secret?: string;
    };
    response: {
      data: {
        job_id: string;
        lease_id: string;
        status: "pending";
        dry_run: boolean;
      };
    };
  };
  /** The key's tenant's energy leases, newest first: the newest 100, or a page at a time with `limit` and `cursor`. */
  "GET /v1/apps/tron/leases": {
    body: never;
    response: {
      data: {
        id: string;
        job_id: string;
        status: "pending" | "running" | "succeeded" | "failed" | "canceled" | "expired";
        receiver: string;
        energy: number;
        duration_seconds: number;
        cost: number;
        cost_units: number;
        dry_run: boolean;
        provider_order_id: string | null;
        quote_id: string;
        created_at: string;
        updated_at: string;
      }[];
      /** With `limit` or `cursor`: the cursor of the next page, null at the end. */
      next_cursor?: string | null;
    };
  };
  /** One energy lease of the key's tenant. */
  "GET /v1/apps/tron/leases/{id}": {
    body: never;
    response: {
      data: {
        id: string;
        job_id: string;
        status: "pending" | "running" | "succeeded" | "failed" | "canceled" | "expired";
        receiver: string;
        energy: number;
        duration_seconds: number;
        cost: number;
        cost_units: number;
        dry_run: boolean;
        provider_order_id: string | null;
        quote_id: string;
        created_at: string;
        updated_at: string;
      };
    };
  };
};

export type Route = keyof Api;
/** The successful answer of a route. */
export type ResponseOf<R extends Route> = Api[R]["response"];
/** `data` of a wrapped answer (`{data: ...}`). */
export type DataOf<R extends Route> = Extract<ResponseOf<R>, { data: unknown }>["data"];
/** One element of a route's `data` list. */
export type ItemOf<R extends Route> = DataOf<R> extends readonly (infer T)[] ? T : never;
/** The JSON request body of a route. */
export type BodyOf<R extends Route> = Api[R]["body"];
