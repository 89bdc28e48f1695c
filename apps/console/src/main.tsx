import { StrictMode, useEffect, useState, type ReactNode } from "react";
import { createRoot } from "react-dom/client";
import { api, type Me } from "./client.js";
import { Alerts } from "./pages/alerts.js";
import { Conversations } from "./pages/conversations.js";
import { Files } from "./pages/files.js";
import { Inbox } from "./pages/inbox.js";
import { Instances } from "./pages/instances.js";
import { Jobs } from "./pages/jobs.js";
import { Keys } from "./pages/keys.js";
import { Discounts } from "./pages/ops-discounts.js";
import { Models } from "./pages/ops-models.js";
import { Review } from "./pages/ops-review.js";
import { Tenants } from "./pages/ops-tenants.js";
import { Upstreams } from "./pages/ops-upstreams.js";
import { Overview } from "./pages/overview.js";
import { Prices } from "./pages/prices.js";
import { Push } from "./pages/push.js";
import { SignIn } from "./pages/sign-in.js";
import { Usage } from "./pages/usage.js";
import { ErrorBox } from "./ui.js";
import "./styles.css";

type Page = { path: string; title: string; operator?: boolean; render: (me: Me, canWrite: boolean) => ReactNode };

const PAGES: Page[] = [
  { path: "overview", title: "Overview", render: (me) => <Overview me={me} /> },
  { path: "inbox", title: "Inbox", render: () => <Inbox /> },
  { path: "conversations", title: "Conversations", render: () => <Conversations /> },
  { path: "push", title: "Push", render: () => <Push /> },
  { path: "keys", title: "API keys", render: () => <Keys /> },
  { path: "instances", title: "Instances", render: () => <Instances /> },
  { path: "prices", title: "Prices", render: () => <Prices /> },
  { path: "usage", title: "Usage", render: () => <Usage /> },
  { path: "jobs", title: "Jobs and leases", render: () => <Jobs /> },
  { path: "files", title: "Files", render: () => <Files /> },
  { path: "alerts", title: "Webhooks and alerts", render: () => <Alerts /> },
  { path: "ops/upstreams", title: "Upstreams", operator: true, render: (_, w) => <Upstreams canWrite={w} /> },
  { path: "ops/models", title: "Models and prices", operator: true, render: (_, w) => <Models canWrite={w} /> },
  { path: "ops/discounts", title: "Discounts", operator: true, render: (_, w) => <Discounts canWrite={w} /> },
  { path: "ops/review", title: "Review", operator: true, render: (_, w) => <Review canWrite={w} /> },
  { path: "ops/tenants", title: "Tenants and roles", operator: true, render: (_, w) => <Tenants canWrite={w} /> },
];

const currentPath = () => window.location.hash.replace(/^#\/?/, "") || "overview";

function App() {
  const [signedIn, setSignedIn] = useState(api.signedIn);
  const [me, setMe] = useState<Me | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [path, setPath] = useState(currentPath);

  useEffect(() => {
    api.onSignedOut = () => {
      setSignedIn(false);
      setMe(null);
    };
    const onHash = () => setPath(currentPath());
    window.addEventListener("hashchange", onHash);
    return () => window.removeEventListener("hashchange", onHash);
  }, []);
  useEffect(() => {
    if (!signedIn) return;
    setError(null);
    api.data<Me>("GET", "/console/me").then(setMe, setError);
  }, [signedIn]);

  if (!signedIn) return <SignIn onSignedIn={() => setSignedIn(true)} />;
  if (!me) return <div className="loading">{error ? <ErrorBox error={error} /> : "Loading…"}</div>;

  const operator = me.platform_role !== null;
  const canWrite = me.platform_role === "platform_admin";
  const visible = PAGES.filter((p) => !p.operator || operator);
  const page = visible.find((p) => p.path === path) ?? visible[0]!;
  const link = (p: Page) => (
    <a key={p.path} href={`#/${p.path}`} className={p === page ? "active" : ""}>
      {p.title}
    </a>
  );
  return (
    <div className="shell">
      <nav>
        <div className="brand">AI Gateway</div>
        <div className="who">
          {me.email}
          <br />
          <small>
            {me.tenant_role}
            {me.platform_role ? ` · operator (${me.platform_role})` : ""}
          </small>
        </div>
        <div className="nav-group">{visible.filter((p) => !p.operator).map(link)}</div>
        {operator ? (
          <div className="nav-group">
            <div className="nav-title">Operator</div>
            {visible.filter((p) => p.operator).map(link)}
          </div>
        ) : null}
        <button className="secondary" onClick={() => void api.logout()}>
          Sign out
        </button>
      </nav>
      <main>
        <h1>{page.title}</h1>
        {page.render(me, canWrite)}
      </main>
    </div>
  );
}

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
