import { useState } from "react";
import { api } from "../client.js";
import { bytes, intOrUndefined, when } from "../format.js";
import { MoreButton, usePages } from "../list-pages.js";
import { ActionForm, Card, ErrorBox, Field, Refresh, Table, useLoad } from "../ui.js";
import { KeyGate } from "./key-gate.js";
import type { DataOf, ItemOf } from "../api-types.js";

type FileItem = ItemOf<"GET /v1/apps/file/list">;
type Uploaded = DataOf<"PUT /v1/apps/file/upload">;

type StorageQuota = DataOf<"GET /console/files/quota">;

export function Files() {
  // The quota is the tenant's (read with the session), shown before any API key is given.
  const quota = useLoad(() => api.data<StorageQuota>("GET", "/console/files/quota"));
  return (
    <>
      <Card title="Storage" actions={<Refresh load={quota} />}>
        <ErrorBox error={quota.error} />
        {quota.data ? <QuotaStats quota={quota.data} /> : null}
      </Card>
      <KeyGate scopes="file:read and file:write">{(key) => <FileList apiKey={key} onChange={quota.reload} />}</KeyGate>
    </>
  );
}

function QuotaStats({ quota }: { quota: StorageQuota }) {
  return (
    <>
      <dl className="stats">
        <div>
          <dt>Space used</dt>
          <dd data-testid="quota-bytes">
            {bytes(quota.bytes_used)} of {bytes(quota.bytes_limit)}
          </dd>
        </div>
        <div>
          <dt>Files kept</dt>
          <dd data-testid="quota-files">
            {quota.files_used.toLocaleString("en-US")} of {quota.files_limit.toLocaleString("en-US")}
          </dd>
        </div>
      </dl>
      <p className="muted">
        Files count until they expire or their downloads are used up and the gateway removes them. An upload that does not fit what is left is refused and
        nothing of it is kept.
      </p>
    </>
  );
}

function FileList({ apiKey, onChange }: { apiKey: string; onChange: () => void }) {
  const auth = { kind: "apiKey" as const, key: apiKey };
  const files = usePages<FileItem>("/v1/apps/file/list", { limit: 50, key: (f) => f.id, auth }, [apiKey]);
  const [file, setFile] = useState<File | null>(null);
  const [expiresIn, setExpiresIn] = useState("");
  const [maxDownloads, setMaxDownloads] = useState("");
  return (
    <>
      <Card title="Files" actions={<Refresh load={files} />}>
        <ErrorBox error={files.error} />
        <Table
          rows={files.rows}
          rowKey={(f) => f.id}
          empty="No files."
          columns={[
            ["Name", (f) => f.filename],
            ["Size", (f) => `${f.size.toLocaleString("en-US")} B`],
            [
              "Downloads",
              (f) => (f.downloads !== undefined ? `${f.downloads} of ${f.max_downloads ?? "unlimited"}` : `at most ${f.max_downloads ?? "unlimited"}`),
            ],
            ["Expires", (f) => when(f.expires_at)],
            ["Share", (f) => (f.share_url ? <a href={f.share_url}>share page</a> : "—")],
          ]}
        />
        <MoreButton pages={files} label="Older files" />
      </Card>
      <Card title="Upload a file">
        <ActionForm
          submit="Upload"
          onSubmit={async () => {
            if (!file) throw new Error("Choose a file first.");
            // Browsers refuse header values outside Latin-1: send the name as RFC 8187 UTF-8, which the API decodes.
            const headers: Record<string, string> = { "x-filename": `UTF-8''${encodeURIComponent(file.name)}` };
            if (intOrUndefined(expiresIn) !== undefined) headers["x-expires-in"] = expiresIn.trim();
            if (intOrUndefined(maxDownloads) !== undefined) headers["x-max-downloads"] = maxDownloads.trim();
            const saved = await api.data<Uploaded>("PUT", "/v1/apps/file/upload", { auth, raw: file, headers }).finally(onChange);
            files.reload();
            return (
              <>
                Uploaded {saved.filename}. {saved.share_url ? <a href={saved.share_url}>Share page</a> : null}
              </>
            );
          }}
        >
          <div className="row">
            <Field label="File">
              <input type="file" onChange={(e) => setFile(e.target.files?.[0] ?? null)} />
            </Field>
            <Field label="Expires in (seconds)" hint="Empty: the gateway's default.">
              <input inputMode="numeric" value={expiresIn} onChange={(e) => setExpiresIn(e.target.value)} />
            </Field>
            <Field label="Max downloads" hint="Empty: unlimited.">
              <input inputMode="numeric" value={maxDownloads} onChange={(e) => setMaxDownloads(e.target.value)} />
            </Field>
          </div>
        </ActionForm>
      </Card>
    </>
  );
}
