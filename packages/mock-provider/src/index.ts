export { startMockProvider, type Behaviour, type MockProvider, type MockProviderOptions, type RecordedRequest } from "./server.js";
export type { Usage } from "./chat.js";
export {
  contentText,
  countTokens,
  promptTokens,
  replyFor,
  truncateToTokens,
  utf8Bytes,
  TOKENS_PER_MESSAGE,
  TOKENS_PER_PROMPT,
  type ChatMessage,
} from "./tokens.js";
export { EMBEDDING_DIMENSIONS, embeddingOf, embeddingTokens } from "./embeddings.js";
