// Memory of a large transfer: uploads and downloads one large file through the
// real stack (edge → gRPC → files → local store) and samples the resident set
// of the edge and the files service while it runs. Flat memory means the peak
// stays near the idle size whatever the file size. Prints a markdown section.
//   pnpm --filter @gateway/bench files                 (1 GiB)
//   FILES_BENCH_MIB=256 pnpm --filter @gateway/bench files
import { readFileSync } from "node:fs";
import { call, downloadRaw, newTenant, patternSha, startStack, uploadRaw } from "@gateway/testkit";
import { machine } from "./machine.js";

if (process.argv.includes("--help") || process.argv.includes("-h")) {
  console.log(`Usage: pnpm --filter @gateway/bench files

Uploads and downloads one large file through the real stack (edge → gRPC → files →
local store), checks both by SHA-256, and prints the peak resident memory of the edge
and the files service as a markdown section (for docs/benchmarks/files.md); writes no file.
Environment: FILES_BENCH_MIB (file size in MiB, default 1024).`);
  process.exit(0);
}

const MIB = 1_048_576;
const size = Number(process.env.FILES_BENCH_MIB ?? 1024) * MIB;

/** Resident set (VmRSS) of a process, MiB. */
function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** Samples the peak resident set of some processes while `work` runs (every 20 ms). */
async function peakDuring<T>(pids: Record<string, number>, work: () => Promise<T>): Promise<{ result: T; peak: Record<string, number>; seconds: number }> {
  const peak: Record<string, number> = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, rssMiB(pid)]));
  const timer = setInterval(() => {
    for (const [k, pid] of Object.entries(pids)) peak[k] = Math.max(peak[k]!, rssMiB(pid));
  }, 20);
  const started = process.hrtime.bigint();
  try {
    const result = await work();
    return { result, peak, seconds: Number(process.hrtime.bigint() - started) / 1e9 };
  } finally {
    clearInterval(timer);
  }
}

const stack = await startStack({
  services: ["files"],
  env: { edge: { LOG_LEVEL: "warn" }, files: { LOG_LEVEL: "warn", FILES_MAX_BYTES: String(size + MIB) } },
});
try {
  const tenant = await newTenant(stack.edgeUrl, "bench");
  const key = (await call(stack.edgeUrl, "POST", "/console/keys", { token: tenant.token, body: { name: "bench", scopes: ["*"] } })).body.data.key as string;
  const pids = { edge: stack.process("edge").pid!, files: stack.process("files").pid! };
  // Warm-up: a small transfer each way, so the idle figure includes loaded code and pools.
  const warm = await uploadRaw(stack.edgeUrl, { key, size: 4 * MIB });
  if ("aborted" in warm || warm.status !== 201) throw new Error("warm-up upload failed");
  await downloadRaw(warm.body.data.download_url);
  await new Promise((r) => setTimeout(r, 500));
  const idle = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, rssMiB(pid)]));

  const expected = patternSha(size, 11);
  const up = await peakDuring(pids, () => uploadRaw(stack.edgeUrl, { key, size, seed: 11 }));
  const uploaded = up.result;
  if ("aborted" in uploaded || uploaded.status !== 201) throw new Error(`upload failed: ${JSON.stringify(uploaded)}`);
  if (uploaded.body.data.sha256 !== expected) throw new Error("upload sha256 differs");
  const down = await peakDuring(pids, () => downloadRaw(uploaded.body.data.download_url as string));
  if (down.result.sha256 !== expected || down.result.size !== size) throw new Error("download differs from the upload");

  const f = (n: number) => n.toFixed(0);
  const rate = (s: number) => `${(size / MIB / s).toFixed(0)} MiB/s`;
  const report = `## Large transfer: peak resident memory

\`pnpm --filter @gateway/bench files\` (FILES_BENCH_MIB=${size / MIB}), ${new Date().toISOString().slice(0, 10)}, ${machine()}.
One ${size / MIB} MiB file uploaded (PUT, Content-Length) and downloaded through edge → gRPC → files → local directory;
resident set (VmRSS) sampled every 20 ms. Both transfers verified by SHA-256.

| process | idle after warm-up | peak during upload | peak during download |
| --- | ---: | ---: | ---: |
| edge | ${f(idle.edge!)} MiB | ${f(up.peak.edge!)} MiB | ${f(down.peak.edge!)} MiB |
| files | ${f(idle.files!)} MiB | ${f(up.peak.files!)} MiB | ${f(down.peak.files!)} MiB |

Upload ${up.seconds.toFixed(1)} s (${rate(up.seconds)}), download ${down.seconds.toFixed(1)} s (${rate(down.seconds)}), on loopback.
`;
  console.log(report);
} finally {
  await stack.shutdown();
}
