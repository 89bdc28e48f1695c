export { startMockProvider, type Behaviour, type MockProvider, type MockProviderOptions, type RecordedRequest } from "./server.js";
export type { Usage, UsageOverride } from "./chat.js";
export { exampleOf, type CallSpec, type ToolCall } from "./tools.js";
export {
  contentText,
  countTokens,
  promptTokens,
  replyFor,
  truncateToTokens,
  utf8Bytes,
  TOKENS_FOR_TOOLS,
  TOKENS_PER_IMAGE,
  TOKENS_PER_MESSAGE,
  TOKENS_PER_PROMPT,
  TOKENS_PER_TOOL,
  type ChatMessage,
} from "./tokens.js";
export { EMBEDDING_DIMENSIONS, embeddingOf, embeddingTokens } from "./embeddings.js";
