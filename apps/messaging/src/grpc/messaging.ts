import type { Implementation } from "@gateway/grpc-kit";
import type { messagingV1 } from "@gateway/protos";
import type { MessagingContext } from "../db.js";
import { listSocialOpsProviders } from "../domain/socialops/providers.js";

export function messagingHandlers(_ctx: MessagingContext): Implementation<typeof messagingV1> {
  return {
    async ListSocialOpsProviders() {
      return { providers: listSocialOpsProviders() };
    },
  };
}
