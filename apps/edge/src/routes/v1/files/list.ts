import { forward } from "../../forward.js";
import { baseUrl, fileView } from "./file-urls.js";
import { listAnswer, pageArgs } from "../../page.js";
import { FileListQuery, FileListResponse } from "./list.types.js";

export const getFileList = forward({ tags: ["files"], access: { kind: "apiKey", scope: "file:read" } }, "get /v1/apps/file/list", {
  summary: "The key's tenant's files, newest first (scope file:read): the newest 100, or a page at a time with `limit` and `cursor`.",
  query: FileListQuery,
  responses: { 200: ["files", FileListResponse] },
  call: ({ deps, query, tenantId }) => deps.services.files.ListFiles({ tenant_id: tenantId, ...pageArgs(query, 100) }),
  answer: (res, { deps, req, query }) => {
    const base = baseUrl(req, deps.env.PUBLIC_URL);
    return listAnswer(res.files, (f) => fileView(f, base), res.next_cursor, query);
  },
});
