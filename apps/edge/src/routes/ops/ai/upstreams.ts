import { forward, ok } from "../../forward.js";
import { opsRead, opsWrite } from "../ops-access.js";
import { upstreamJson } from "./encode.js";
import { PutUpstreamRequest, PutUpstreamResponse, TestUpstreamResponse, UpstreamParams, UpstreamsResponse } from "./upstreams.types.js";

export const listUpstreams = forward(opsRead("managed-ai"), "get /ops/ai/upstreams", {
  summary: "Upstream providers, newest first (latest 200), without credentials.",
  responses: { 200: ["upstreams", UpstreamsResponse] },
  call: ({ deps }) => deps.services.managedAi.ListUpstreams({}),
  answer: ({ upstreams }) => ok(upstreams.map(upstreamJson)),
});

export const putUpstream = forward(opsWrite("managed-ai"), "put /ops/ai/upstreams/:id", {
  summary: "Create or update an upstream provider, or rotate its API key (sent keys are stored encrypted and never returned).",
  params: UpstreamParams,
  body: PutUpstreamRequest,
  responses: { 200: ["written; version counts the writes", PutUpstreamResponse], 409: "version is not the current one (or not 0/absent on create)" },
  call: ({ deps, params, body }) => deps.services.managedAi.PutUpstream({ id: params.id, ...body }),
  answer: ({ id, version, key_configured }) => ok({ id, version, key_configured }),
});

// It uses the stored credential against a third party: platform_admin only.
export const testUpstream = forward(opsWrite("managed-ai"), "post /ops/ai/upstreams/:id/test", {
  summary:
    "Check the provider connection: GET {base_url}/models with the stored key, no inference. A refused connection or a timeout is reported as unreachable.",
  params: UpstreamParams,
  responses: {
    200: ["the provider's answer, or that none came", TestUpstreamResponse],
    404: "no such upstream",
    503: "the stored key cannot be decrypted with the configured keys, or managed-ai is unavailable",
  },
  call: ({ deps, params }) => deps.services.managedAi.TestUpstream({ id: params.id }),
  answer: (result) => ok({ reachable: result.reachable, authenticated: result.authenticated, upstream_status: result.upstream_status ?? null }),
});
