export { Shutdown, type ShutdownStep } from "./shutdown.js";
export { runCommand } from "./command.js";
export { serviceBasics } from "./basics.js";
export { peerClient, type PeerEnv } from "./peer-client.js";
export {
  relayTiming,
  runGrpcService,
  startGrpcService,
  startInfrastructure,
  type CommonEnv,
  type GrpcEnv,
  type Infrastructure,
  type InfrastructureOptions,
  type PrismaLike,
} from "./service.js";
