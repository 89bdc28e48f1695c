import type { IncomingMessage } from "node:http";
import express, { type RequestHandler } from "express";

const JSON_TYPES = ["application/json", "application/*+json"];

/**
 * Which requests the JSON body parser reads: what type-is matches against
 * JSON_TYPES, with the usual header, exactly `application/json`, answered
 * without parsing it and matching both patterns (that was most of the body
 * parser's own time on the metered route).
 */
export function isJsonBody(req: IncomingMessage): boolean {
  // The parser runs inside the app: the request is express's.
  return req.headers["content-type"] === "application/json" || Boolean((req as express.Request).is(JSON_TYPES));
}

/** The JSON body (strict: an object or an array), its bytes kept as `req.rawBody` for forwarding as sent. */
export function jsonBody(limitBytes: number): RequestHandler {
  return express.json({
    limit: limitBytes,
    strict: true,
    type: isJsonBody,
    verify: (req, _res, buf) => {
      (req as express.Request).rawBody = buf;
    },
  });
}
