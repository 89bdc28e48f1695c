export { call, newTenant, signIn, type JsonResponse } from "./http.js";
export { freePort } from "./ports.js";
export { ServiceProcess, type LogLine } from "./process.js";
export { GRPC_SERVICES, REPO_ROOT, startStack, type EdgeName, type GrpcServiceName, type ServiceName, type Stack, type StackOptions } from "./stack.js";
export { TcpProxy } from "./tcp-proxy.js";
export {
  MOCK_DELEGATOR,
  MOCK_ITRX_API_KEY,
  MOCK_ITRX_API_SECRET,
  MOCK_ITRX_DELEGATOR,
  MOCK_ITRX_ERRNO,
  MOCK_TOTAL_ENERGY_LIMIT,
  MOCK_TOTAL_ENERGY_WEIGHT,
  startTronMock,
  type ItrxMockBehaviour,
  type ItrxMockOrder,
  type MockOrder,
  type MockTransaction,
  type TronMock,
  type TronMockBehaviour,
} from "./tron-mock.js";
export { startCallbackReceiver, type CallbackReceiver, type ReceivedCallback } from "./callback-receiver.js";
export { downloadRaw, pattern, patternSha, uploadRaw, type DownloadResult, type UploadOptions, type UploadResult } from "./transfer.js";
export { startLedger, type LedgerService } from "./ledger.js";
export { freshDatabase, type FreshDatabase } from "./database.js";
export { catalogChecked } from "./events.js";
export { CERT_NAMES, makeCerts, testCerts, type CertName, type TestCerts } from "./certs.js";
