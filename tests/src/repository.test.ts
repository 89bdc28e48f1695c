import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import { databaseUrl, Migrator } from "@gateway/db-kit";
import { OUTBOX_PRISMA_MODELS } from "@gateway/events-runtime";
import { REPO_ROOT } from "@gateway/testkit";

const SERVICES = ["edge", "ledger", "managed-ai", "jobs", "messaging", "files"];
const SERVER = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";

describe("every service's schema", () => {
  it.each(SERVICES)("%s: migrations hold every change of schema.prisma", async (service) => {
    const prismaDir = join(REPO_ROOT, "apps", service, "prisma");
    const migrator = await Migrator.open({
      url: databaseUrl(SERVER, "postgres"),
      schemaPath: join(prismaDir, "schema.prisma"),
      migrationsDir: join(prismaDir, "migrations"),
    });
    try {
      expect(await migrator.pendingSchemaChanges(), `run: cd apps/${service} && pnpm exec gateway-migrate create <name>`).toBe("");
    } finally {
      await migrator.close();
    }
  });

  it.each(SERVICES)("%s: declares the outbox tables exactly as the events kit expects", (service) => {
    const schema = readFileSync(join(REPO_ROOT, "apps", service, "prisma", "schema.prisma"), "utf8");
    expect(schema).toContain(OUTBOX_PRISMA_MODELS);
  });
});

describe("generated code", () => {
  it("is never committed: the build produces it", () => {
    const tracked = execFileSync("git", ["ls-files"], { cwd: REPO_ROOT, encoding: "utf8" })
      .split("\n")
      .filter((path) => path.includes("/src/generated/") || path.includes("/dist/"));
    expect(tracked).toEqual([]);
  });
});

describe("the front door", () => {
  it("every script the README runs as ./path, and .ci/run, is committed executable", () => {
    const readme = readFileSync(join(REPO_ROOT, "README.md"), "utf8");
    const named = [...new Set([...readme.matchAll(/\.\/(scripts\/[\w.-]+)/g)].map((m) => m[1]!)), ".ci/run"];
    expect(named).toContain("scripts/stack.sh");
    expect(named).toContain("scripts/test.sh");
    // The mode in git's index is what a fresh clone gets.
    const modes = new Map(
      execFileSync("git", ["ls-files", "-s", "--", ...named], { cwd: REPO_ROOT, encoding: "utf8" })
        .trim()
        .split("\n")
        .map((line) => [line.split("\t")[1]!, line.split(" ")[0]!]),
    );
    for (const path of named) expect(modes.get(path), path).toBe("100755");
  });
});

describe("the runtime", () => {
  const pinned = readFileSync(join(REPO_ROOT, ".nvmrc"), "utf8").trim();

  it("is the Node.js of .nvmrc (24 LTS): the tests themselves run on it, never on an older node", () => {
    expect(pinned).toMatch(/^24\.\d+\.\d+$/);
    expect(process.versions.node.split(".")[0]).toBe(pinned.split(".")[0]);
  });

  it("is the same in package.json's engines and the Dockerfile's base image", () => {
    const engines = (JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { engines: { node: string } }).engines.node;
    expect(engines).toMatch(/^>=24\.\d+ <25$/);
    expect(readFileSync(join(REPO_ROOT, "Dockerfile"), "utf8")).toContain(`ARG NODE_VERSION=${pinned}`);
  });
});

describe("generated documentation", () => {
  it("lists exactly the environment variables the code reads", () => {
    expect(() => execFileSync(process.execPath, [join(REPO_ROOT, "scripts", "env-docs.mjs"), "--check"], { stdio: "pipe" })).not.toThrow();
  });
});

describe("deployment files", () => {
  const compose = parse(readFileSync(join(REPO_ROOT, "docker-compose.yml"), "utf8"), { merge: true }) as {
    services: Record<
      string,
      {
        healthcheck?: { test: string[] };
        depends_on?: Record<string, { condition: string }>;
        build?: { args?: { SERVICE?: string } };
        environment?: Record<string, string>;
        ports?: string[];
        networks?: string[];
        profiles?: string[];
        volumes?: string[];
        image?: string;
      }
    >;
    networks: Record<string, { internal?: boolean } | null>;
  };

  it("compose builds every service from the one Dockerfile, with health checks and dependency order", () => {
    for (const service of SERVICES) {
      const def = compose.services[service]!;
      expect(def.build?.args?.SERVICE, service).toBe(service);
      expect(def.healthcheck?.test.length, service).toBeGreaterThan(0);
      expect(def.depends_on?.postgres?.condition, service).toBe("service_healthy");
      expect(def.depends_on?.nats?.condition, service).toBe("service_healthy");
    }
    for (const service of SERVICES.filter((s) => s !== "edge")) {
      expect(compose.services.edge!.depends_on?.[service]?.condition).toBe("service_healthy");
    }
  });

  it("compose ships no credential: every secret must be given (${VAR:?}), none has a default", () => {
    const SECRETS = [
      "SERVICE_TOKEN",
      "JWT_SECRET",
      "WIDGET_JWT_SECRET",
      "ENCRYPTION_KEYS",
      "BOOTSTRAP_ADMIN_EMAIL",
      "BOOTSTRAP_ADMIN_PASSWORD",
      "POSTGRES_PASSWORD",
    ];
    let seen = 0;
    for (const [name, def] of Object.entries(compose.services)) {
      for (const [key, value] of Object.entries(def.environment ?? {})) {
        if (!SECRETS.includes(key)) continue;
        seen++;
        expect(String(value), `${name}.${key}`).toMatch(/^\$\{[A-Z_]+:\?[^}]+\}$/);
      }
      if (def.environment?.DATABASE_URL) expect(def.environment.DATABASE_URL, `${name}.DATABASE_URL`).toContain("${POSTGRES_PASSWORD:?");
    }
    expect(seen).toBeGreaterThanOrEqual(SECRETS.length + 5);
    const text = readFileSync(join(REPO_ROOT, "docker-compose.yml"), "utf8");
    for (const key of SECRETS) expect(text, key).not.toMatch(new RegExp(`\\$\\{${key}:-`));
    expect(text).not.toMatch(/change-me|POSTGRES_PASSWORD: postgres\b|postgres:postgres@/);
  });

  /** The stack itself: every service but the monitoring profile's. */
  const stackServices = () => Object.entries(compose.services).filter(([, def]) => !def.profiles?.includes("monitoring"));

  it("compose publishes only the edge, on loopback unless EDGE_BIND says otherwise; the rest sits on an internal network", () => {
    const published = stackServices()
      .filter(([, def]) => (def.ports ?? []).length > 0)
      .map(([name]) => name);
    expect(published).toEqual(["edge"]);
    expect(compose.services.edge!.ports).toEqual(["${EDGE_BIND:-127.0.0.1}:${EDGE_PORT:-8080}:8080"]);
    expect(compose.networks.backend?.internal).toBe(true);
    for (const [name, def] of stackServices()) {
      expect(def.networks, name).toContain("backend");
      if (name !== "edge") expect(def.networks, name).not.toContain("public");
    }
  });

  it("compose's monitoring profile runs Prometheus on the services' metrics ports and Grafana with the dashboard, on loopback, with no credential", () => {
    const monitoring = Object.entries(compose.services).filter(([, def]) => def.profiles?.includes("monitoring"));
    expect(monitoring.map(([name]) => name).sort()).toEqual(["grafana", "prometheus"]);
    const prometheus = compose.services.prometheus!;
    const grafana = compose.services.grafana!;
    expect(prometheus.ports ?? []).toEqual([]);
    expect(prometheus.networks).toEqual(["backend", "monitoring"]);
    expect(grafana.ports).toEqual(["${GRAFANA_BIND:-127.0.0.1}:${GRAFANA_PORT:-3000}:3000"]);
    expect(grafana.networks).toEqual(["monitoring"]);
    expect(grafana.environment).toMatchObject({ GF_AUTH_ANONYMOUS_ORG_ROLE: "Viewer", GF_AUTH_DISABLE_LOGIN_FORM: "true", GF_AUTH_BASIC_ENABLED: "false" });
    // Prometheus scrapes each service's metrics port (the defaults of their env.ts) by its compose name.
    const scrape = parse(readFileSync(join(REPO_ROOT, "deploy", "monitoring", "prometheus.yml"), "utf8")) as {
      scrape_configs: { static_configs: { targets: string[] }[] }[];
    };
    const targets = scrape.scrape_configs.flatMap((c) => c.static_configs.flatMap((s) => s.targets));
    expect(targets.sort()).toEqual(["edge:8080", "files:9105", "jobs:9103", "ledger:9101", "managed-ai:9102", "messaging:9104"]);
    for (const mount of [...(prometheus.volumes ?? []), ...(grafana.volumes ?? [])].filter((v) => v.startsWith("./"))) {
      expect(existsSync(join(REPO_ROOT, mount.split(":")[0]!)), mount).toBe(true);
    }
  });

  it("the Grafana dashboard graphs spend, tokens, requests by status, overhead p50/p99 and the available balance from the contract's metric names", () => {
    const dashboard = JSON.parse(readFileSync(join(REPO_ROOT, "deploy", "monitoring", "grafana", "dashboards", "ai-gateway.json"), "utf8")) as {
      uid: string;
      panels: { title: string; targets: { expr: string }[] }[];
    };
    const exprs = dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr));
    const NAMES = [
      "gateway_ai_requests_total",
      "gateway_ai_spend_units_total",
      "gateway_ai_tokens_total",
      "gateway_ai_overhead_seconds",
      "gateway_ledger_available_units",
    ];
    for (const expr of exprs) {
      const used = [...expr.matchAll(/\b(gateway_[a-z_]+)/g)].map((m) => m[1]!.replace(/_bucket$/, ""));
      expect(used.length, expr).toBeGreaterThan(0);
      for (const name of used) expect(NAMES, expr).toContain(name);
    }
    for (const name of NAMES)
      expect(
        exprs.some((e) => e.includes(name)),
        name,
      ).toBe(true);
    expect(exprs.filter((e) => /histogram_quantile\(0\.5,/.test(e))).not.toEqual([]);
    expect(exprs.filter((e) => /histogram_quantile\(0\.99,/.test(e))).not.toEqual([]);
    expect(exprs.some((e) => e.includes("sum by (status)"))).toBe(true);
    expect(exprs.some((e) => e.includes("sum by (model, kind)"))).toBe(true);
  });

  it("docker-compose config refuses to render without the secrets, and renders with a generated set", () => {
    const dir = mkdtempSync(join(tmpdir(), "gw-compose-"));
    const run = (envFile: string, extra: string[] = []) => {
      // Debian's docker-compose, or the compose plugin of docker (scripts/test.sh installs one of them).
      for (const [file, args] of [
        ["docker-compose", []],
        ["docker", ["compose"]],
      ] as const) {
        try {
          execFileSync(file, [...args, "--env-file", envFile, ...extra, "config"], {
            cwd: REPO_ROOT,
            env: { PATH: process.env.PATH ?? "" },
            stdio: "pipe",
            encoding: "utf8",
          });
          return { ok: true, stderr: "" };
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === "ENOENT") continue;
          const stderr = String((err as { stderr?: string }).stderr);
          // docker without the compose plugin: not a verdict on the file.
          if (file === "docker" && /not a docker command|unknown (command|shorthand flag)/i.test(stderr)) continue;
          return { ok: false, stderr };
        }
      }
      return expect.fail("docker-compose (or docker's compose plugin) is needed to validate docker-compose.yml (apt-get install docker-compose)");
    };
    try {
      const example = join(dir, "example.env");
      writeFileSync(example, readFileSync(join(REPO_ROOT, ".env.example"), "utf8"));
      const refused = run(example);
      expect(refused.ok).toBe(false);
      expect(refused.stderr).toMatch(/Missing mandatory value|required variable/i);
      const generated = join(dir, "generated.env");
      writeFileSync(generated, execFileSync(join(REPO_ROOT, "scripts", "gen-secrets.sh"), { encoding: "utf8" }));
      expect(run(generated)).toEqual({ ok: true, stderr: "" });
      expect(run(generated, ["--profile", "monitoring"])).toEqual({ ok: true, stderr: "" });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("gRPC between services runs over mutual TLS in compose: each process mounts the CA and its own certificate and key (docs/decisions/0230)", () => {
    for (const service of SERVICES) {
      const def = compose.services[service]!;
      expect(def.environment?.GRPC_TLS_CA, service).toBe("/run/gateway-tls/ca.crt");
      expect(def.environment?.GRPC_TLS_CERT, service).toBe("/run/gateway-tls/tls.crt");
      expect(def.environment?.GRPC_TLS_KEY, service).toBe("/run/gateway-tls/tls.key");
      expect(def.volumes, service).toEqual(
        expect.arrayContaining([
          "./.certs/ca.crt:/run/gateway-tls/ca.crt:ro",
          `./.certs/${service}.crt:/run/gateway-tls/tls.crt:ro`,
          `./.certs/${service}.key:/run/gateway-tls/tls.key:ro`,
        ]),
      );
      // No other process's key.
      expect(
        def.volumes!.filter((v) => v.includes(".key:")),
        service,
      ).toHaveLength(1);
    }
  });

  it("gRPC between services runs over mutual TLS in Kubernetes: Secrets mounted, TLS set, probes on the plaintext health port", () => {
    let rendered: string;
    try {
      rendered = execFileSync("kubectl", ["kustomize", join(REPO_ROOT, "deploy", "base")], { encoding: "utf8" });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return expect.fail("kubectl is needed to render deploy/ (apt-get install kubectl)");
      throw err;
    }
    const docs = parseAllDocuments(rendered).map((d) => d.toJS() as { kind: string; metadata: { name: string }; data?: Record<string, string>; spec: any });
    const config = docs.find((d) => d.kind === "ConfigMap" && d.metadata.name === "gateway-config")!.data!;
    expect(config).toMatchObject({
      GRPC_TLS_CA: "/etc/gateway/tls/ca.crt",
      GRPC_TLS_CERT: "/etc/gateway/tls/tls.crt",
      GRPC_TLS_KEY: "/etc/gateway/tls/tls.key",
    });
    for (const d of docs.filter((doc) => doc.kind === "Deployment")) {
      const pod = d.spec.template.spec;
      const volume = pod.volumes.find((v: { name: string }) => v.name === "grpc-tls");
      expect(volume?.secret?.secretName, d.metadata.name).toBe(`${d.metadata.name}-grpc-tls`);
      expect(pod.containers[0].volumeMounts).toContainEqual({ name: "grpc-tls", mountPath: "/etc/gateway/tls", readOnly: true });
      if (d.metadata.name === "edge") continue;
      const container = pod.containers[0];
      // The kubelet's grpc probe speaks no TLS: the startup probe asks the health-only plaintext port.
      expect(container.startupProbe.grpc.port, d.metadata.name).toBe(Number(config.GRPC_HEALTH_PORT));
      // Readiness and liveness over HTTP on the metrics port (docs/decisions/0309), which the service serves.
      const metrics = container.ports.find((p: { name: string }) => p.name === "metrics");
      expect(metrics, d.metadata.name).toBeDefined();
      expect(container.env).toContainEqual({ name: "METRICS_PORT", value: String(metrics.containerPort) });
      expect(container.readinessProbe.httpGet, d.metadata.name).toEqual({ path: "/health/ready", port: "metrics" });
      expect(container.livenessProbe.httpGet, d.metadata.name).toEqual({ path: "/health/live", port: "metrics" });
    }
  });

  it("the Kubernetes example Secret holds only placeholders, and kustomize renders the network policies", () => {
    const secret = parseAllDocuments(readFileSync(join(REPO_ROOT, "deploy", "base", "config.yaml"), "utf8"))
      .map((d) => d.toJS() as { kind: string; stringData?: Record<string, string> })
      .find((d) => d.kind === "Secret")!;
    for (const [key, value] of Object.entries(secret.stringData ?? {})) expect(value, key).toContain("REPLACE-ME");
    expect(Object.keys(secret.stringData ?? {})).toContain("SERVICE_TOKEN");
    let rendered: string;
    try {
      rendered = execFileSync("kubectl", ["kustomize", join(REPO_ROOT, "deploy", "base")], { encoding: "utf8" });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return expect.fail("kubectl is needed to render deploy/ (apt-get install kubectl)");
      throw err;
    }
    type Policy = {
      kind: string;
      metadata: { name: string };
      spec: {
        podSelector: { matchLabels?: Record<string, string> };
        ingress?: { from?: { podSelector?: { matchLabels: Record<string, string> } }[]; ports: { port: number }[] }[];
      };
    };
    const policies = parseAllDocuments(rendered)
      .map((d) => d.toJS() as Policy)
      .filter((d) => d.kind === "NetworkPolicy");
    const deny = policies.find((p) => p.metadata.name === "default-deny-ingress")!;
    expect(deny.spec.podSelector).toEqual({});
    expect(deny.spec.ingress).toBeUndefined();
    const callers = (service: string, port: number) =>
      policies
        .find((p) => p.spec.podSelector.matchLabels?.["app.kubernetes.io/name"] === service)!
        .spec.ingress!.filter((rule) => rule.ports.some((p) => p.port === port))
        .flatMap((rule) =>
          (rule.from ?? [{ podSelector: { matchLabels: { "app.kubernetes.io/name": "*" } } }]).map((f) => f.podSelector?.matchLabels["app.kubernetes.io/name"]),
        )
        .sort();
    expect(callers("edge", 8080)).toEqual(["*"]);
    expect(callers("ledger", 50051)).toEqual(["edge", "jobs", "managed-ai", "messaging"]);
    expect(callers("managed-ai", 50052)).toEqual(["edge", "jobs", "messaging"]);
    for (const [service, port] of [
      ["jobs", 50053],
      ["messaging", 50054],
      ["files", 50055],
    ] as const)
      expect(callers(service, port), service).toEqual(["edge"]);
  });

  it("kustomize renders every service with readiness and liveness probes and a scalable edge", () => {
    let rendered: string;
    try {
      rendered = execFileSync("kubectl", ["kustomize", join(REPO_ROOT, "deploy", "base")], { encoding: "utf8" });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return expect.fail("kubectl is needed to render deploy/ (apt-get install kubectl)");
      throw err;
    }
    const docs = parseAllDocuments(rendered).map((d) => d.toJS() as { kind: string; metadata: { name: string }; spec: any });
    const deployments = docs.filter((d) => d.kind === "Deployment");
    expect(deployments.map((d) => d.metadata.name).sort()).toEqual([...SERVICES].sort());
    for (const d of deployments) {
      const container = d.spec.template.spec.containers[0];
      expect(container.readinessProbe, d.metadata.name).toBeDefined();
      expect(container.livenessProbe, d.metadata.name).toBeDefined();
    }
    const edge = deployments.find((d) => d.metadata.name === "edge")!;
    expect(edge.spec.replicas).toBeGreaterThanOrEqual(2);
    expect(edge.spec.template.spec.containers[0].readinessProbe.httpGet.path).toBe("/health");
    expect(docs.some((d) => d.kind === "HorizontalPodAutoscaler" && d.spec.scaleTargetRef.name === "edge")).toBe(true);
  });
});
