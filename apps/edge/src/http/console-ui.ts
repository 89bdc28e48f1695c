import { existsSync } from "node:fs";
import { join } from "node:path";
import express, { type Express, type NextFunction, type Request, type Response } from "express";
import type { Logger } from "@gateway/logger";

/** Where the console is served: no API route starts with it (routes are /auth, /console, /ops, /v1, /health, ...). */
export const CONSOLE_UI_PATH = "/app";

// The console calls only this origin's API; nothing else may load or frame it.
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

/**
 * Serves the built web console (a static single-page app) under /app/. Hashed
 * assets are cached for good; index.html never, so a new build shows at once.
 * Without a build (`pnpm build` not run) /app/ answers 404 like any unknown path.
 */
export function mountConsoleUi(app: Express, dir: string, logger: Logger): void {
  if (!existsSync(join(dir, "index.html"))) {
    logger.warn({ dir }, "web console not built; /app/ is not served (pnpm build)");
    return;
  }
  const headers = (res: Response) => {
    res.setHeader("Content-Security-Policy", CSP);
    res.setHeader("X-Content-Type-Options", "nosniff");
    res.setHeader("Referrer-Policy", "no-referrer");
  };
  // Exactly /app (string routes ignore a trailing slash, which would loop).
  app.use((req: Request, res: Response, next: NextFunction) => {
    if ((req.method === "GET" || req.method === "HEAD") && req.path === CONSOLE_UI_PATH) res.redirect(301, `${CONSOLE_UI_PATH}/`);
    else next();
  });
  app.use(
    CONSOLE_UI_PATH,
    express.static(dir, {
      index: "index.html",
      redirect: false,
      fallthrough: true,
      setHeaders(res, path) {
        headers(res);
        res.setHeader("Cache-Control", path.includes(`${join(dir, "assets")}`) ? "public, max-age=31536000, immutable" : "no-cache");
      },
    }),
  );
}
