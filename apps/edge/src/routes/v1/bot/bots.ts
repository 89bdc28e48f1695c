import { data } from "../../page.js";
import { created, forward } from "../../forward.js";
import { BOT_KEY } from "./bot-access.js";
import { BotView, CreateBotRequest } from "./bots.types.js";
import { botView } from "./encode.js";

export const postBot = forward(BOT_KEY, "post /v1/apps/bot", {
  summary: "Create a bot instance (its chats are opened by widget sessions).",
  body: CreateBotRequest,
  responses: { 201: ["created", data(BotView)] },
  call: ({ deps, body, tenantId }) =>
    deps.services.conversations.CreateBot({ tenant_id: tenantId, name: body.name, welcome_message: body.welcome_message ?? "" }),
  answer: (r) => created(botView(r)),
});
