export { call, newTenant, signIn, type JsonResponse } from "./http.js";
export { freePort } from "./ports.js";
export { ServiceProcess, type LogLine } from "./process.js";
export { GRPC_SERVICES, REPO_ROOT, startStack, type EdgeName, type GrpcServiceName, type ServiceName, type Stack, type StackOptions } from "./stack.js";
export { TcpProxy } from "./tcp-proxy.js";
