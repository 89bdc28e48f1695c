-- Each rotation of a widget session's refresh token starts a new generation; only
-- access tokens of the current generation are accepted (docs/decisions/0120).
ALTER TABLE "widget_sessions" ADD COLUMN "generation" INTEGER NOT NULL DEFAULT 0;
