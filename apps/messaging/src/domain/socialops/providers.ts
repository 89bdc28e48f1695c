/** Inbound SocialOps providers this deployment understands (CONTRACT.md section 10). */
export const SOCIALOPS_PROVIDERS = [{ id: "generic", name: "Generic webhook" }] as const;

export type SocialOpsProvider = { id: string; name: string };

export function listSocialOpsProviders(): SocialOpsProvider[] {
  return SOCIALOPS_PROVIDERS.map((p) => ({ ...p }));
}
