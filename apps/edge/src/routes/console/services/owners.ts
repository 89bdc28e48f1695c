import type { EdgeDeps } from "../../../deps.js";
import { aiModelOwner } from "./ai-model.js";
import { listMessagingInstances, putMessagingInstance } from "./messaging-services.js";
import type { PutServiceRequest, ServiceInstanceJson } from "./services.types.js";

/** The service that owns instances of one `service_id`: writes them and lists a tenant's. */
export type ServiceOwner<Body> = {
  put(deps: EdgeDeps, tenantId: string, body: Body): Promise<ServiceInstanceJson>;
  list(deps: EdgeDeps, tenantId: string): Promise<ServiceInstanceJson[]>;
};

/**
 * Every kind of instance `POST/GET /console/services` knows, by `service_id`.
 * A new kind is one entry here (and its member of PutServiceRequest).
 */
export const SERVICE_OWNERS: { [Id in PutServiceRequest["service_id"]]: ServiceOwner<Extract<PutServiceRequest, { service_id: Id }>> } = {
  "ai-model": aiModelOwner,
  "webhook-push": messagingOwner(),
  socialops: messagingOwner(),
};

/** webhook-push and socialops instances belong to the messaging service. */
function messagingOwner<Body extends Parameters<typeof putMessagingInstance>[2]>(): ServiceOwner<Body> {
  return { put: putMessagingInstance, list: listMessagingInstances };
}
