-- CreateTable
CREATE TABLE "app_instances" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "service_id" TEXT NOT NULL,
    "alias" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "config" JSONB NOT NULL,
    "version" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "app_instances_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "push_messages" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "instance_id" TEXT NOT NULL,
    "api_key_id" TEXT,
    "status" TEXT NOT NULL,
    "unit_price" BIGINT NOT NULL,
    "reserved_units" BIGINT NOT NULL,
    "hold_id" TEXT,
    "hold_expires_at" TIMESTAMPTZ(3) NOT NULL,
    "charged_units" BIGINT,
    "recovered" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    "settled_at" TIMESTAMPTZ(3),

    CONSTRAINT "push_messages_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "push_deliveries" (
    "message_id" TEXT NOT NULL,
    "target_id" TEXT NOT NULL,
    "position" INTEGER NOT NULL,
    "type" TEXT NOT NULL,
    "ok" BOOLEAN,
    "status" INTEGER,
    "error" TEXT,
    "finished_at" TIMESTAMPTZ(3),

    CONSTRAINT "push_deliveries_pkey" PRIMARY KEY ("message_id","target_id")
);

-- CreateTable
CREATE TABLE "social_threads" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "instance_id" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "external_thread_id" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "unread_count" INTEGER NOT NULL DEFAULT 0,
    "message_count" INTEGER NOT NULL DEFAULT 0,
    "last_activity_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "social_threads_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "social_messages" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "instance_id" TEXT NOT NULL,
    "thread_id" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "direction" TEXT NOT NULL,
    "event_id" TEXT,
    "author" TEXT,
    "text" TEXT NOT NULL,
    "delivery_state" TEXT,
    "delivery_attempts" INTEGER NOT NULL DEFAULT 0,
    "delivery_last_status" INTEGER,
    "delivery_error" TEXT,
    "delivered_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "social_messages_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "app_instances_tenant_id_created_at_idx" ON "app_instances"("tenant_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "app_instances_tenant_id_service_id_alias_key" ON "app_instances"("tenant_id", "service_id", "alias");

-- CreateIndex
CREATE INDEX "push_messages_status_updated_at_idx" ON "push_messages"("status", "updated_at");

-- CreateIndex
CREATE INDEX "push_messages_tenant_id_created_at_idx" ON "push_messages"("tenant_id", "created_at");

-- CreateIndex
CREATE INDEX "social_threads_instance_id_last_activity_at_idx" ON "social_threads"("instance_id", "last_activity_at");

-- CreateIndex
CREATE UNIQUE INDEX "social_threads_instance_id_provider_external_thread_id_key" ON "social_threads"("instance_id", "provider", "external_thread_id");

-- CreateIndex
CREATE INDEX "social_messages_thread_id_created_at_idx" ON "social_messages"("thread_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "social_messages_instance_id_provider_event_id_key" ON "social_messages"("instance_id", "provider", "event_id");

-- AddForeignKey
ALTER TABLE "push_deliveries" ADD CONSTRAINT "push_deliveries_message_id_fkey" FOREIGN KEY ("message_id") REFERENCES "push_messages"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "social_messages" ADD CONSTRAINT "social_messages_thread_id_fkey" FOREIGN KEY ("thread_id") REFERENCES "social_threads"("id") ON DELETE CASCADE ON UPDATE CASCADE;
