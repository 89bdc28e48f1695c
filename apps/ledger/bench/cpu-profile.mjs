// Preloaded into the ledger by the benchmark's --profile (NODE_OPTIONS=--import, since
// --cpu-prof is not allowed there): records a V8 CPU profile, written on exit.
import { Session } from "node:inspector";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

const dir = process.env.LEDGER_PROFILE_DIR;
if (dir) {
  const session = new Session();
  session.connect();
  session.post("Profiler.enable");
  session.post("Profiler.setSamplingInterval", { interval: 200 });
  session.post("Profiler.start");
  process.on("exit", () => {
    // Same-thread inspector sessions answer synchronously, so this runs before exit.
    session.post("Profiler.stop", (err, result) => {
      if (!err) writeFileSync(join(dir, `ledger-${process.pid}.cpuprofile`), JSON.stringify(result.profile));
    });
  });
}
