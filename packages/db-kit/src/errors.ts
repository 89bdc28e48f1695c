/** A unique-constraint violation, as Prisma (P2002) or pg (23505) reports it. */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; cause?: { code?: string; originalCode?: string } } | undefined;
  return e?.code === "P2002" || e?.code === "23505" || e?.cause?.code === "23505" || e?.cause?.originalCode === "23505";
}
