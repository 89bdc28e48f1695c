import type { EdgeDeps } from "../../../deps.js";
import { keyPrincipal } from "../../../http/access.js";
import { defineRoute } from "../../../http/route.js";
import { data } from "../../page.js";
import { BOT, TAGS } from "./bot-access.js";
import { BotView, CreateBotRequest } from "./bots.types.js";
import { botView } from "./encode.js";

export const postBot = defineRoute<EdgeDeps, Record<string, never>, Record<string, never>, CreateBotRequest>({
  method: "post",
  path: "/v1/apps/bot",
  summary: "Create a bot instance (its chats are opened by widget sessions).",
  tags: TAGS,
  access: BOT,
  body: CreateBotRequest,
  responses: { 201: { description: "created", schema: data(BotView) } },
  async handler({ deps, body, principal }) {
    const bot = await deps.services.conversations.CreateBot({
      tenant_id: keyPrincipal(principal).tenantId,
      name: body.name,
      welcome_message: body.welcome_message ?? "",
    });
    return { status: 201, body: { data: botView(bot) } };
  },
});
