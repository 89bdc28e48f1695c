// Compares two V8 heap snapshots (bench/src/window-probe.mjs writes them): objects by
// constructor (count, self bytes), those that grew most first.
//   node bench/src/heap-compare.mjs early.heapsnapshot late.heapsnapshot [top=30]
import { readFileSync } from "node:fs";

const [early, late, top = "30"] = process.argv.slice(2);
if (!early || !late) {
  console.log("Usage: node bench/src/heap-compare.mjs EARLY.heapsnapshot LATE.heapsnapshot [top=30]");
  process.exit(1);
}

function byConstructor(file) {
  const s = JSON.parse(readFileSync(file, "utf8"));
  const fields = s.snapshot.meta.node_fields;
  const types = s.snapshot.meta.node_types[0];
  const width = fields.length;
  const [typeAt, nameAt, sizeAt] = ["type", "name", "self_size"].map((f) => fields.indexOf(f));
  const counts = new Map();
  for (let i = 0; i < s.nodes.length; i += width) {
    const type = types[s.nodes[i + typeAt]];
    const name = type === "object" || type === "closure" || type === "native" ? s.strings[s.nodes[i + nameAt]] : `(${type})`;
    const key = `${name}`.slice(0, 80);
    const c = counts.get(key) ?? { count: 0, bytes: 0 };
    c.count++;
    c.bytes += s.nodes[i + sizeAt];
    counts.set(key, c);
  }
  return counts;
}

const a = byConstructor(early);
const b = byConstructor(late);
const rows = [...new Set([...a.keys(), ...b.keys()])].map((k) => {
  const x = a.get(k) ?? { count: 0, bytes: 0 };
  const y = b.get(k) ?? { count: 0, bytes: 0 };
  return { k, x, y };
});
console.log("count early → late (change), self KiB early → late: constructor");
for (const { k, x, y } of rows.sort((p, q) => q.y.count - q.x.count - (p.y.count - p.x.count)).slice(0, Number(top)))
  console.log(
    `${String(x.count).padStart(8)} → ${String(y.count).padStart(8)} (${String(y.count - x.count).padStart(7)}), ${(x.bytes / 1024).toFixed(0).padStart(7)} → ${(y.bytes / 1024).toFixed(0).padStart(7)} KiB: ${k}`,
  );
