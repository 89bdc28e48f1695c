-- CreateTable
CREATE TABLE "consumer_checkpoints" (
    "consumer" TEXT NOT NULL,
    "stream_seq" BIGINT NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "consumer_checkpoints_pkey" PRIMARY KEY ("consumer")
);
