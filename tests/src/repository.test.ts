import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import { databaseUrl, Migrator } from "@gateway/db-kit";
import { OUTBOX_PRISMA_MODELS } from "@gateway/events";
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

  it("compose publishes only the edge, on loopback unless EDGE_BIND says otherwise; the rest sits on an internal network", () => {
    const published = Object.entries(compose.services)
      .filter(([, def]) => (def.ports ?? []).length > 0)
      .map(([name]) => name);
    expect(published).toEqual(["edge"]);
    expect(compose.services.edge!.ports).toEqual(["${EDGE_BIND:-127.0.0.1}:${EDGE_PORT:-8080}:8080"]);
    expect(compose.networks.backend?.internal).toBe(true);
    for (const [name, def] of Object.entries(compose.services)) {
      expect(def.networks, name).toContain("backend");
      if (name !== "edge") expect(def.networks, name).not.toContain("public");
    }
  });

  it("docker-compose config refuses to render without the secrets, and renders with a generated set", () => {
    const dir = mkdtempSync(join(tmpdir(), "gw-compose-"));
    const run = (envFile: string) => {
      // Debian's docker-compose, or the compose plugin of docker (scripts/test.sh installs one of them).
      for (const [file, args] of [
        ["docker-compose", []],
        ["docker", ["compose"]],
      ] as const) {
        try {
          execFileSync(file, [...args, "--env-file", envFile, "config"], {
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
    } finally {
      rmSync(dir, { recursive: true, force: true });
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
