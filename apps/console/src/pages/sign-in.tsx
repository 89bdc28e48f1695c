import { useState } from "react";
import { api } from "../client.js";
import { ActionForm, Field } from "../ui.js";

export function SignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const [mode, setMode] = useState<"login" | "register">("login");
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [name, setName] = useState("");
  const [tenant, setTenant] = useState("");
  return (
    <div className="sign-in">
      <h1>AI Gateway console</h1>
      <div className="tabs">
        <button type="button" className={mode === "login" ? "active" : "secondary"} onClick={() => setMode("login")}>
          Sign in
        </button>
        <button type="button" className={mode === "register" ? "active" : "secondary"} onClick={() => setMode("register")}>
          Create an account
        </button>
      </div>
      <ActionForm
        submit={mode === "login" ? "Sign in" : "Create account"}
        onSubmit={async () => {
          if (mode === "login") await api.login(email, password);
          else await api.register({ email, password, ...(name ? { name } : {}), ...(tenant ? { tenant_name: tenant } : {}) });
          onSignedIn();
        }}
      >
        <Field label="Email">
          <input name="email" type="email" autoComplete="username" value={email} onChange={(e) => setEmail(e.target.value)} required />
        </Field>
        <Field label="Password" hint={mode === "register" ? "12 to 256 characters." : undefined}>
          <input
            name="password"
            type="password"
            autoComplete={mode === "login" ? "current-password" : "new-password"}
            value={password}
            onChange={(e) => setPassword(e.target.value)}
            required
          />
        </Field>
        {mode === "register" ? (
          <>
            <Field label="Your name (optional)">
              <input name="name" value={name} onChange={(e) => setName(e.target.value)} />
            </Field>
            <Field label="Organisation (optional)" hint="A new tenant is created for you; you are its owner.">
              <input name="tenant_name" value={tenant} onChange={(e) => setTenant(e.target.value)} />
            </Field>
          </>
        ) : null}
      </ActionForm>
    </div>
  );
}
