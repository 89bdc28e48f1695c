import { createServer, IncomingMessage, type Server, type ServerOptions, ServerResponse } from "node:http";
import type { Express } from "express";

/**
 * The HTTP server of an express app, whose requests and responses are born with
 * the app's prototypes (`app.request`, `app.response`). Express gives every
 * request both with `Object.setPrototypeOf` in `app.handle`: a change of map per
 * object, the largest self time of express's own code on the metered route (and
 * it leaves the request's map a different one from the one it was built with).
 * Born with them, the same call changes nothing and costs next to nothing.
 */
export function createAppServer(app: Express, options: ServerOptions): Server {
  // Node calls `new options.IncomingMessage(socket)` and `new options.ServerResponse(req, opts)`.
  function AppRequest(...args: ConstructorParameters<typeof IncomingMessage>): IncomingMessage {
    return Reflect.construct(IncomingMessage, args, AppRequest) as IncomingMessage;
  }
  AppRequest.prototype = app.request;
  function AppResponse(...args: ConstructorParameters<typeof ServerResponse>): ServerResponse {
    return Reflect.construct(ServerResponse, args, AppResponse) as ServerResponse;
  }
  AppResponse.prototype = app.response;
  return createServer(
    {
      ...options,
      IncomingMessage: AppRequest as unknown as typeof IncomingMessage,
      ServerResponse: AppResponse as unknown as typeof ServerResponse,
    },
    app,
  );
}
