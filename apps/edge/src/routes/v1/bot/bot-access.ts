/** What the bot's routes declare alike: the key scope and the tag. */
export const BOT = { kind: "apiKey", scope: "bot:send" } as const;
export const TAGS = ["bot"];
