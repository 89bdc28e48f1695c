import { AppError } from "@gateway/errors";
import { newId } from "@gateway/contract/ids";
import type { HubContext } from "../hub-context.js";

export async function createBot({ ctx, input }: { ctx: HubContext; input: { tenantId: string; name: string; welcomeMessage: string } }) {
  const name = input.name.trim();
  if (name.length < 1 || name.length > 128) throw new AppError("invalid_request", "name must be 1-128 characters.");
  if (input.welcomeMessage.length > 4096) throw new AppError("invalid_request", "welcome_message must be at most 4096 characters.");
  return ctx.transact(async (tx, emit) => {
    const bot = await tx.botInstance.create({
      data: { id: newId("bot"), tenantId: input.tenantId, name, welcomeMessage: input.welcomeMessage || null },
    });
    await emit("bot.created", { bot_id: bot.id, tenant_id: bot.tenantId });
    return bot;
  });
}
