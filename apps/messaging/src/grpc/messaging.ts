import type { Implementation } from "@gateway/grpc-kit";
import type { messagingV1 } from "@gateway/protos";
import type { MessagingContext } from "../db.js";
import { listSocialOpsProviders } from "../domain/socialops/providers.js";

export function messagingHandlers(_ctx: MessagingContext): Pick<Implementation<typeof messagingV1>, "ListSocialOpsProviders"> {
  return {
    async ListSocialOpsProviders() {
      return { providers: listSocialOpsProviders() };
    },
  };
}
