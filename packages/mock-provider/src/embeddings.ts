import { createHash } from "node:crypto";
import { countTokens } from "./tokens.js";

/**
 * Deterministic embeddings: each input's vector is derived from the SHA-256 of
 * its text (or of its token array's JSON), DIMENSIONS floats in [-1, 1];
 * `prompt_tokens` is tokens(text) per string input (see tokens.ts) or the
 * length of a token array. `encoding_format: "base64"` answers little-endian
 * float32 bytes in base64, as OpenAI does (the official SDK asks for it).
 */
export const EMBEDDING_DIMENSIONS = 8;

export type EmbeddingsRequest = { model: string; inputs: (string | number[])[]; base64: boolean; dimensions: number };

export function parseEmbeddingsRequest(body: unknown): EmbeddingsRequest | string {
  if (!body || typeof body !== "object" || Array.isArray(body)) return "The body must be a JSON object.";
  const b = body as Record<string, unknown>;
  if (typeof b.model !== "string" || b.model.length === 0) return "you must provide a model parameter";
  const input = b.input;
  let inputs: (string | number[])[];
  if (typeof input === "string") inputs = [input];
  else if (Array.isArray(input) && input.length > 0 && input.every((v) => typeof v === "number")) inputs = [input as number[]];
  else if (
    Array.isArray(input) &&
    input.length > 0 &&
    input.every((v) => typeof v === "string" || (Array.isArray(v) && v.every((n) => typeof n === "number")))
  ) {
    inputs = input as (string | number[])[];
  } else return "'input' must be a string, an array of strings, or token arrays";
  if (inputs.some((i) => i.length === 0)) return "'input' cannot contain an empty string";
  if (b.encoding_format !== undefined && b.encoding_format !== "float" && b.encoding_format !== "base64") return "'encoding_format' must be float or base64";
  const dimensions = b.dimensions === undefined ? EMBEDDING_DIMENSIONS : b.dimensions;
  if (typeof dimensions !== "number" || !Number.isInteger(dimensions) || dimensions < 1 || dimensions > EMBEDDING_DIMENSIONS)
    return "'dimensions' is out of range";
  return { model: b.model, inputs, base64: b.encoding_format === "base64", dimensions };
}

/** The vector of one input (exported so tests can compare). */
export function embeddingOf(input: string | number[], dimensions = EMBEDDING_DIMENSIONS): number[] {
  const digest = createHash("sha256")
    .update(typeof input === "string" ? input : JSON.stringify(input))
    .digest();
  return [...digest.subarray(0, dimensions)].map((b) => Math.round(((b / 255) * 2 - 1) * 1e6) / 1e6);
}

export function embeddingTokens(input: string | number[]): number {
  return typeof input === "string" ? countTokens(input) : input.length;
}

export function embeddingsBody(req: EmbeddingsRequest) {
  const tokens = req.inputs.reduce((n, i) => n + embeddingTokens(i), 0);
  return {
    object: "list",
    data: req.inputs.map((input, index) => {
      const vector = embeddingOf(input, req.dimensions);
      return { object: "embedding", index, embedding: req.base64 ? Buffer.from(new Float32Array(vector).buffer).toString("base64") : vector };
    }),
    model: req.model,
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  };
}
