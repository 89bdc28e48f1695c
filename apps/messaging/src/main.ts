import { conversationsV1, messagingV1 } from "@gateway/protos";
import { serviceBasics, startGrpcService } from "@gateway/runtime";
import { createPrisma, type Tx } from "./db.js";
import { MessagingEnv, loadEnv } from "./env.js";
import { messagingHandlers } from "./grpc/messaging.js";
import { startApps } from "./app-wiring.js";
import { conversationHandlers } from "./grpc/conversations.js";
import { startHub } from "./hub.js";
import { withFeed } from "./domain/feed/project.js";

const env = loadEnv(process.env);
await startGrpcService<Tx, ReturnType<typeof createPrisma>>({
  ...serviceBasics("messaging", MessagingEnv, env, import.meta.url),
  createPrisma,
  serviceNames: [messagingV1.serviceName, conversationsV1.serviceName],
  register: async (server, infra) => {
    const { prisma } = infra;
    // Every transaction of the service: a feed kind's event also writes the feed (docs/decisions/0225).
    const transact = withFeed(infra.transact);
    server.add(messagingV1, {
      ...messagingHandlers({ prisma, transact }),
      ...(await startApps(env, { prisma, transact }, infra)),
    });
    server.add(conversationsV1, conversationHandlers(startHub(env, infra, transact)));
  },
});
