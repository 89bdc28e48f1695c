import { existsSync } from "node:fs";
import type { Express, NextFunction, Request, Response } from "express";
import type { Logger } from "@gateway/logger";

/** Where the embeddable chat widget is served (docs/decisions/0178); no API route starts with it. */
export const WIDGET_SCRIPT_PATH = "/widget.js";

/**
 * The routes a widget calls from a visitor's browser on the customer's site: its token
 * is a Bearer header, never a cookie, so any origin may call them. `/widget/auth` is not
 * among them: it takes an API key, which belongs on the customer's server.
 */
const WIDGET_ROUTES = /^\/v1\/apps\/bot\/widget\/(refresh|revoke|token|events|messages)\/?$/i;

// A script resource runs in the embedding page; this policy only keeps it inert if opened directly.
const SCRIPT_CSP = "default-src 'none'; frame-ancestors 'none'";

/** CORS for the widget routes only: any origin, no credentials, Authorization and Content-Type headers. */
export function widgetCors() {
  return (req: Request, res: Response, next: NextFunction) => {
    if (!WIDGET_ROUTES.test(req.path)) return next();
    res.setHeader("Access-Control-Allow-Origin", "*");
    res.setHeader("Access-Control-Expose-Headers", "X-Request-ID, Retry-After");
    if (req.method !== "OPTIONS") return next();
    res.setHeader("Access-Control-Allow-Methods", "GET, POST");
    res.setHeader("Access-Control-Allow-Headers", "Authorization, Content-Type");
    res.setHeader("Access-Control-Max-Age", "600");
    res.status(204).end();
  };
}

/** Serves the built widget script at /widget.js (cached briefly: its name carries no hash). */
export function mountWidgetScript(app: Express, file: string, logger: Logger): void {
  if (!existsSync(file)) {
    logger.warn({ file }, "chat widget not built; /widget.js is not served (pnpm build)");
    return;
  }
  app.get(WIDGET_SCRIPT_PATH, (_req: Request, res: Response) => {
    res.setHeader("Content-Security-Policy", SCRIPT_CSP);
    res.setHeader("X-Content-Type-Options", "nosniff");
    res.setHeader("Cross-Origin-Resource-Policy", "cross-origin");
    res.setHeader("Access-Control-Allow-Origin", "*");
    res.setHeader("Cache-Control", "public, max-age=300");
    res.type("application/javascript; charset=utf-8");
    res.sendFile(file, { dotfiles: "deny", lastModified: false, headers: {} });
  });
}
