import { useState, type ReactNode } from "react";
import { Card, Field } from "../ui.js";

/**
 * Routes under /v1 take an API key, not a session. The key typed here stays in this
 * tab's memory (never stored, never shown back) and is sent as X-API-Key.
 */
let remembered = "";

export function KeyGate({ scopes, children }: { scopes: string; children: (key: string) => ReactNode }) {
  const [key, setKey] = useState(remembered);
  const [draft, setDraft] = useState("");
  if (!key)
    return (
      <Card title="An API key is needed here">
        <form
          className="form"
          onSubmit={(e) => {
            e.preventDefault();
            remembered = draft.trim();
            setKey(remembered);
            setDraft("");
          }}
        >
          <Field
            label="API key"
            hint={`These routes are called with an API key of your tenant with scope ${scopes} (create one under API keys). It stays in this tab's memory only.`}
          >
            <input name="api_key" type="password" autoComplete="off" value={draft} onChange={(e) => setDraft(e.target.value)} required />
          </Field>
          <div className="form-actions">
            <button type="submit">Use this key</button>
          </div>
        </form>
      </Card>
    );
  return (
    <>
      <p className="muted">
        Using an API key from this tab's memory.{" "}
        <button
          className="link"
          onClick={() => {
            remembered = "";
            setKey("");
          }}
        >
          Forget it
        </button>
      </p>
      {children(key)}
    </>
  );
}
