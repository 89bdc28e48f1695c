import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "@gateway/testkit";

export const PROFILE = process.env.RELIABILITY_PROFILE === "long" ? "long" : "ci";

export type FaultFigures = {
  requests: number;
  /** 500 answers: failures nobody classified (faults may give 502 and 503, never 500). */
  internalErrors: number;
  byOutcome: Record<string, number>;
  faults: string[];
  unplannedDeaths: number;
  records: number;
  recordsByStatus: Record<string, number>;
  waitingForOperator: number;
  /** The same by error code (a client that disconnected is never one: docs/decisions/0177). */
  waitingForOperatorByCode?: Record<string, number>;
  unitsCharged: string;
  unitsLost: string;
  holdProblems: number;
  idempotencyViolations: number;
  eventsLostOrDoubled: number;
  fatalOrLeakLines: number;
  secretsFound: number;
  replicas: string;
  durationSeconds: number;
};

export type FuzzFigures = {
  routes: number;
  inputsTried: number;
  /** Inputs whose declared Content-Length was not their body's, closed without an answer (not failures). */
  brokenFramingUnanswered: number;
  serverErrors: number;
  badShapes: number;
  stackTraces: number;
  jwtAttacks: number;
  jwtAccepted: number;
  ssrfCases: number;
  ssrfAccepted: number;
  /** Names that do not resolve at write time: stored, and checked again at every delivery (DNS pinned at connect). */
  ssrfDeferred: number;
  secretsFound: number;
  logLinesScanned: number;
  /** Unary calls of every service without the service token or with a wrong one, and how many were not refused. */
  serviceCalls?: number;
  serviceCallsAccepted?: number;
  /** Login attempts of a flood from one address against a 20-a-minute limit; refused with 429; answered after a password check. */
  loginFloodAttempts?: number;
  loginFloodRefused?: number;
  loginFloodPasswordChecks?: number;
  realSignInsRefused?: number;
};

type Figures = { profile: string; at: string; faults?: FaultFigures; fuzz?: FuzzFigures };

const stateFile = join(REPO_ROOT, "tests", ".reliability", `${PROFILE}.json`);

/**
 * Where the report goes: docs/reliability.md only under `pnpm docs` (WRITE_DOCS=1); otherwise
 * tests/.reliability/<profile>.md (ignored by git), so a test run leaves the working tree as it found it.
 */
export const REPORT_FILE =
  process.env.WRITE_DOCS === "1" ? join(REPO_ROOT, "docs", "reliability.md") : join(REPO_ROOT, "tests", ".reliability", `${PROFILE}.md`);

/** Records a section's figures and rewrites the report (REPORT_FILE) from everything this run measured so far. */
export function saveFigures(section: "faults", data: FaultFigures): void;
export function saveFigures(section: "fuzz", data: FuzzFigures): void;
export function saveFigures(section: "faults" | "fuzz", data: FaultFigures | FuzzFigures): void {
  mkdirSync(join(REPO_ROOT, "tests", ".reliability"), { recursive: true });
  const figures: Figures = existsSync(stateFile) ? (JSON.parse(readFileSync(stateFile, "utf8")) as Figures) : { profile: PROFILE, at: "" };
  (figures as Record<string, unknown>)[section] = data;
  figures.at = new Date().toISOString();
  figures.profile = PROFILE;
  writeFileSync(stateFile, JSON.stringify(figures, null, 2));
  writeFileSync(REPORT_FILE, render(figures));
}

const table = (rows: [string, string | number][]) => ["| Figure | Value |", "| --- | --- |", ...rows.map(([k, v]) => `| ${k} | ${v} |`)].join("\n");

function render(f: Figures): string {
  const out = [
    "# Reliability",
    "",
    `Written by the fault suite itself (\`pnpm reliability --profile=${f.profile}\`, ${f.at}); do not edit by hand.`,
    "The suite and what it asserts: `tests/reliability/` (docs/decisions/0152).",
    "",
  ];
  if (f.faults) {
    const x = f.faults;
    out.push(
      "## Load with faults",
      "",
      `A steady mixed load (JSON, full streams, streams cut at random points on real sockets, a provider that fails, Idempotency-Key retries across replicas) on ${x.replicas}, while these faults were injected in turn:`,
      "",
      ...x.faults.map((fault) => `- ${fault}`),
      "",
      table([
        ["Requests under load", x.requests],
        [
          "Outcomes",
          Object.entries(x.byOutcome)
            .sort()
            .map(([k, v]) => `${k}: ${v}`)
            .join(", "),
        ],
        ["500 internal_error answers under load", x.internalErrors],
        ["Faults injected", x.faults.length],
        ["Processes that died unplanned", x.unplannedDeaths],
        [
          "Usage records",
          `${x.records} (${Object.entries(x.recordsByStatus)
            .sort()
            .map(([k, v]) => `${k} ${v}`)
            .join(", ")})`,
        ],
        [
          "Waiting for an operator (provider usage unknown, hold open)",
          x.waitingForOperatorByCode && x.waitingForOperator > 0
            ? `${x.waitingForOperator} (${Object.entries(x.waitingForOperatorByCode)
                .sort()
                .map(([k, v]) => `${k} ${v}`)
                .join(", ")})`
            : x.waitingForOperator,
        ],
        ["Units charged (= captured by the ledger)", x.unitsCharged],
        ["Units lost or double-counted", x.unitsLost],
        ["Records or holds that disagree with the ledger", x.holdProblems],
        ["Idempotency-Key answered twice", x.idempotencyViolations],
        ["Events lost from the outbox or applied twice", x.eventsLostOrDoubled],
        ["Fatal, uncaught or listener-leak log lines", x.fatalOrLeakLines],
        ["Secrets found in logs and events", x.secretsFound],
        ["Duration", `${x.durationSeconds} s`],
      ]),
      "",
    );
  }
  if (f.fuzz) {
    const z = f.fuzz;
    out.push(
      "## Hostile input",
      "",
      "Every route of `/openapi.json` fuzzed in body, query, path and headers (fast-check); JWT attacks; SSRF through customer-supplied URLs; every log line and event scanned for the secrets the run created. Calls between services without the shared service token are refused (decision 0183). Login floods are refused with 429 before any password is hashed while real users from other addresses sign in (decision 0180; per-email backoff and untrusted client-address headers are checked by `tests/src/auth-limits.test.ts`).",
      "",
      table([
        ["Routes fuzzed", z.routes],
        ["Inputs tried", z.inputsTried],
        ["of which framed wrongly by the client (Content-Length not the body's) and closed without an answer", z.brokenFramingUnanswered],
        ["5xx on bad input", z.serverErrors],
        ["Answers not in the contract's error shape", z.badShapes],
        ["Stack traces in answers", z.stackTraces],
        ["JWT attacks tried / accepted", `${z.jwtAttacks} / ${z.jwtAccepted}`],
        ["SSRF cases tried / accepted", `${z.ssrfCases} / ${z.ssrfAccepted}`],
        ["SSRF cases deferred to delivery (a name that does not resolve at write; checked again at connect)", z.ssrfDeferred],
        [
          "gRPC calls of every service without the service token or with a wrong one / not refused",
          `${z.serviceCalls ?? "–"} / ${z.serviceCallsAccepted ?? "–"}`,
        ],
        [
          "Login flood from one address (limit 20 a minute): attempts / refused with 429 / answered after a password check",
          `${z.loginFloodAttempts ?? "–"} / ${z.loginFloodRefused ?? "–"} / ${z.loginFloodPasswordChecks ?? "–"}`,
        ],
        ["Real sign-ins from another address refused during the flood", z.realSignInsRefused ?? "–"],
        ["Log lines and events scanned", z.logLinesScanned],
        ["Secrets found", z.secretsFound],
      ]),
      "",
    );
  }
  return out.join("\n");
}
