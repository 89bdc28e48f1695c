/** What the bot's and the widget's routes declare alike: the key scope, the widget token, the tags. */
export const BOT = { kind: "apiKey", scope: "bot:send" } as const;
export const TAGS = ["bot"];
export const WIDGET = { kind: "widget" } as const;
export const WIDGET_TAGS = ["widget"];
/** The audiences of the bot's and the widget's forwarding routes (routes/forward.ts). */
export const BOT_KEY = { tags: TAGS, access: BOT };
export const WIDGET_TOKEN = { tags: WIDGET_TAGS, access: WIDGET };
