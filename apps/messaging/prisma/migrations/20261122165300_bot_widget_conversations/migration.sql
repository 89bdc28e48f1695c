-- CreateTable
CREATE TABLE "bot_instances" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "welcome_message" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "bot_instances_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "bot_chats" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "bot_id" TEXT,
    "visitor_id" TEXT NOT NULL,
    "display_name" TEXT,
    "conversation_id" TEXT,
    "last_message_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "bot_chats_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "bot_messages" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "chat_id" TEXT NOT NULL,
    "author" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "text" TEXT,
    "file_id" TEXT,
    "reply_to_message_id" TEXT,
    "edited_at" TIMESTAMPTZ(3),
    "deleted_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "bot_messages_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "widget_sessions" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "chat_id" TEXT NOT NULL,
    "visitor_id" TEXT NOT NULL,
    "display_name" TEXT,
    "conversation_id" TEXT,
    "revoked_at" TIMESTAMPTZ(3),
    "revoked_reason" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "widget_sessions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "widget_refresh_tokens" (
    "hash" TEXT NOT NULL,
    "session_id" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "used_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "widget_refresh_tokens_pkey" PRIMARY KEY ("hash")
);

-- CreateTable
CREATE TABLE "event_streams" (
    "stream" TEXT NOT NULL,
    "last_position" BIGINT NOT NULL,

    CONSTRAINT "event_streams_pkey" PRIMARY KEY ("stream")
);

-- CreateTable
CREATE TABLE "feed_events" (
    "stream" TEXT NOT NULL,
    "position" BIGINT NOT NULL,
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "chat_id" TEXT,
    "conversation_id" TEXT,
    "data" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "feed_events_pkey" PRIMARY KEY ("stream","position")
);

-- CreateTable
CREATE TABLE "conversations" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "subject" TEXT,
    "status" TEXT NOT NULL,
    "metadata" JSONB NOT NULL,
    "version" INTEGER NOT NULL,
    "last_activity_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "conversations_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "conversation_participants" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "conversation_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "external_id" TEXT NOT NULL,
    "display_name" TEXT,
    "role" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "conversation_participants_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "conversation_channels" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "conversation_id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "ref" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "conversation_channels_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "conversation_webhooks" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "secret_ciphertext" BYTEA NOT NULL,
    "secret_key_id" TEXT NOT NULL,
    "event_types" TEXT[],
    "status" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revoked_at" TIMESTAMPTZ(3),

    CONSTRAINT "conversation_webhooks_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_deliveries" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "webhook_id" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "last_status" INTEGER,
    "last_error" TEXT,
    "replay" BOOLEAN NOT NULL DEFAULT false,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "bot_instances_tenant_id_created_at_idx" ON "bot_instances"("tenant_id", "created_at");

-- CreateIndex
CREATE INDEX "bot_chats_tenant_id_created_at_idx" ON "bot_chats"("tenant_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "bot_chats_tenant_id_visitor_id_key" ON "bot_chats"("tenant_id", "visitor_id");

-- CreateIndex
CREATE INDEX "bot_messages_chat_id_id_idx" ON "bot_messages"("chat_id", "id");

-- CreateIndex
CREATE INDEX "widget_sessions_tenant_id_created_at_idx" ON "widget_sessions"("tenant_id", "created_at");

-- CreateIndex
CREATE INDEX "widget_refresh_tokens_session_id_idx" ON "widget_refresh_tokens"("session_id");

-- CreateIndex
CREATE UNIQUE INDEX "feed_events_id_key" ON "feed_events"("id");

-- CreateIndex
CREATE INDEX "feed_events_stream_chat_id_position_idx" ON "feed_events"("stream", "chat_id", "position");

-- CreateIndex
CREATE INDEX "conversations_tenant_id_last_activity_at_idx" ON "conversations"("tenant_id", "last_activity_at");

-- CreateIndex
CREATE UNIQUE INDEX "conversation_participants_conversation_id_kind_external_id_key" ON "conversation_participants"("conversation_id", "kind", "external_id");

-- CreateIndex
CREATE INDEX "conversation_channels_conversation_id_idx" ON "conversation_channels"("conversation_id");

-- CreateIndex
CREATE UNIQUE INDEX "conversation_channels_tenant_id_type_ref_key" ON "conversation_channels"("tenant_id", "type", "ref");

-- CreateIndex
CREATE INDEX "conversation_webhooks_tenant_id_created_at_idx" ON "conversation_webhooks"("tenant_id", "created_at");

-- CreateIndex
CREATE INDEX "webhook_deliveries_state_next_attempt_at_idx" ON "webhook_deliveries"("state", "next_attempt_at");

-- CreateIndex
CREATE INDEX "webhook_deliveries_webhook_id_created_at_idx" ON "webhook_deliveries"("webhook_id", "created_at");
