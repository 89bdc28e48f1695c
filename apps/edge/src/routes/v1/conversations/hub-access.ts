/** What the conversation hub's routes declare alike: the key scopes, the tag, the 404 of a conversation. */
export const READ = { kind: "apiKey", scope: "conversation:read" } as const;
export const WRITE = { kind: "apiKey", scope: "conversation:write" } as const;
export const TAGS = ["conversations"];
/** The audiences of the hub's forwarding routes (routes/forward.ts). */
export const HUB_READ = { tags: TAGS, access: READ };
export const HUB_WRITE = { tags: TAGS, access: WRITE };
export const notFound = { description: "no such conversation of this tenant" };
