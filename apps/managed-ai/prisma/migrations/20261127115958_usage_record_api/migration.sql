-- CONTRACT.md 6c: the API a request came through (chat_completions, messages, embeddings),
-- shown by the console's request lookup. Nullable without a default (records written before
-- it say nothing) and in no index: adding it rewrites nothing, and the open statement's
-- index maintenance is unchanged.
ALTER TABLE "usage_records" ADD COLUMN "api" TEXT;
