/** The audience of the system routes (routes/forward.ts): anyone, untagged beyond `system`. */
export const SYSTEM = { tags: ["system"], access: { kind: "public" } } as const;
