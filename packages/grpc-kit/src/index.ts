export { MIN_SERVICE_TOKEN_LENGTH, SERVICE_TOKEN_METADATA } from "./auth.js";
export { createClient, type Client, type ClientOptions } from "./client.js";
export { checkHealth } from "./check.js";
export { HealthService, type ServingStatus } from "./health.js";
export { GrpcServer, type GrpcServerOptions } from "./server.js";
export { channelCredentials, checkTls, GrpcTlsError, readTls, serverCredentials, type GrpcTls, type GrpcTlsEnv } from "./tls.js";
export {
  GRPC_STATUS,
  METADATA,
  fromErrorFields,
  fromServiceError,
  isUnimplemented,
  toErrorFields,
  toStatus,
  transportFailure,
  type ErrorFields,
} from "./status.js";
export { carriedClientSpan, endRpcSpan } from "./tracing.js";
export type * from "./types.js";
export { CarriedCalls, type CarriedClientOptions } from "./carried-client.js";
export { serveCarried, type CarriedFrame, type CarriedMethods, type CarriedReply } from "./carried-server.js";
