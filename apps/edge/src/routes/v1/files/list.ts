import type { EdgeDeps } from "../../../deps.js";
import { keyPrincipal } from "../../../http/access.js";
import { defineRoute } from "../../../http/route.js";
import { baseUrl, fileView } from "./file-urls.js";
import { listAnswer, pageArgs } from "../../page.js";
import { FileListQuery, FileListResponse } from "./files.types.js";

export const getFileList = defineRoute<EdgeDeps, Record<string, never>, FileListQuery>({
  method: "get",
  path: "/v1/apps/file/list",
  summary: "The key's tenant's files, newest first (scope file:read): the newest 100, or a page at a time with `limit` and `cursor`.",
  tags: ["files"],
  access: { kind: "apiKey", scope: "file:read" },
  query: FileListQuery,
  responses: { 200: { description: "files", schema: FileListResponse } },
  async handler({ deps, req, query, principal }) {
    const res = await deps.services.files.ListFiles({ tenant_id: keyPrincipal(principal).tenantId, ...pageArgs(query, 100) });
    const base = baseUrl(req, deps.env.PUBLIC_URL);
    return listAnswer(res.files, (f) => fileView(f, base), res.next_cursor, query);
  },
});
