import type { IncomingHttpHeaders } from "node:http";

/**
 * What a request presents to prove who it is, read from its headers once, here
 * (`authorize` reads it before deciding a route's access; the domain is handed the values).
 */
export type Credentials = {
  /** The value of `Authorization: Bearer <value>`, if the request sends one. */
  bearer: string | undefined;
  /** The API key presented: `X-API-Key`, else the Bearer value (for OpenAI-compatible SDKs). */
  key: string | undefined;
  /**
   * Is it an API key rather than a token? An `X-API-Key` header, or a Bearer value that is
   * not a JWT (three dot-separated parts). Decided here only; whether the key is well formed
   * and valid is the key policy's question.
   */
  presentsKey: boolean;
};

const BEARER = /^Bearer\s+(\S+)\s*$/i;

export function credentialsOf(req: { headers: IncomingHttpHeaders }): Credentials {
  const authorization = req.headers.authorization;
  const bearer = authorization ? BEARER.exec(authorization)?.[1] : undefined;
  const header = req.headers["x-api-key"];
  const apiKey = Array.isArray(header) ? header[0] : header;
  return {
    bearer,
    key: apiKey?.trim() || bearer || undefined,
    presentsKey: apiKey !== undefined || (bearer !== undefined && bearer.split(".").length !== 3),
  };
}
