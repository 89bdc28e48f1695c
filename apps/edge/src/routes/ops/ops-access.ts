/** The operators' audiences (routes/forward.ts): `read` for every platform role, `write` for platform_admin only. */
export const opsRead = (...tags: string[]) => ({ tags: ["ops", ...tags], access: { kind: "platform", level: "read" } }) as const;
export const opsWrite = (...tags: string[]) => ({ tags: ["ops", ...tags], access: { kind: "platform", level: "write" } }) as const;
