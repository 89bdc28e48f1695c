-- CONTRACT.md sections 5 and 6b: the most input tokens the provider counts for one image
-- part of a chat request; null (the default) means the model refuses image parts.
ALTER TABLE "models" ADD COLUMN "max_tokens_per_image" INTEGER;
ALTER TABLE "models" ADD CONSTRAINT "models_max_tokens_per_image_check" CHECK ("max_tokens_per_image" IS NULL OR "max_tokens_per_image" >= 1);
