// Preloaded into a service (NODE_OPTIONS=--import) by src/profile.ts: records a V8
// CPU profile into $PROFILE_DIR, written when the process exits.
import { Session } from "node:inspector";
import { writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";

const dir = process.env.PROFILE_DIR;
if (dir) {
  const service = basename(dirname(dirname(process.argv[1] ?? "unknown")));
  const session = new Session();
  session.connect();
  session.post("Profiler.enable");
  session.post("Profiler.setSamplingInterval", { interval: 250 });
  // PROFILE_ON_SIGNAL=1: start at the first SIGUSR2 (after a warm-up), so the profile holds the steady state only.
  if (process.env.PROFILE_ON_SIGNAL === "1") process.once("SIGUSR2", () => session.post("Profiler.start"));
  else session.post("Profiler.start");
  process.on("exit", () => {
    session.post("Profiler.stop", (err, result) => {
      if (!err) writeFileSync(join(dir, `${service}-${process.pid}.cpuprofile`), JSON.stringify(result.profile));
    });
  });
}
