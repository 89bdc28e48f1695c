import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
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
    services: Record<string, { healthcheck?: { test: string[] }; depends_on?: Record<string, { condition: string }>; build?: { args?: { SERVICE?: string } } }>;
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
