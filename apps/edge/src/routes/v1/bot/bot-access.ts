/** What the bot's and the widget's routes declare alike: the key scope, the widget token, the tags. */
export const BOT = { kind: "apiKey", scope: "bot:send" } as const;
export const TAGS = ["bot"];
export const WIDGET = { kind: "widget" } as const;
export const WIDGET_TAGS = ["widget"];
