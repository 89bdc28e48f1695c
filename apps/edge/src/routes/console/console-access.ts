/** The console's audiences (routes/forward.ts): a signed-in member of a tenant, or its owner or admin ("service:manage"). */
export const member = (...tags: string[]) => ({ tags: ["console", ...tags], access: { kind: "tenant", minRole: "member" } }) as const;
export const admin = (...tags: string[]) => ({ tags: ["console", ...tags], access: { kind: "tenant", minRole: "admin" } }) as const;
