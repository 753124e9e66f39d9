/** Prints the functions with the most self time in a V8 .cpuprofile: `tsx bench/profile-summary.ts file`. */
import { readFileSync } from "node:fs";

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}
const profile = JSON.parse(readFileSync(process.argv[2]!, "utf8")) as {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
};
const self = new Map<string, number>();
const byPackage = new Map<string, number>();
let total = 0;
for (const node of profile.nodes) {
  const hits = node.hitCount ?? 0;
  total += hits;
  const url = node.callFrame.url
    .replace(/^file:\/\/.*?node_modules\//, "")
    .replace(/^file:\/\/.*?\/(src|dist)\//, "$1/");
  const key = `${node.callFrame.functionName || "(anonymous)"} ${url}:${node.callFrame.lineNumber}`;
  self.set(key, (self.get(key) ?? 0) + hits);
  const pkg =
    url.startsWith("src/") || url.startsWith("dist/")
      ? url.split(":")[0]!
      : url.split("/")[0] || node.callFrame.functionName;
  byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + hits);
}
const top = (m: Map<string, number>, n: number) =>
  [...m.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, v]) => `${((v / total) * 100).toFixed(1).padStart(5)}%  ${k}`);
console.log("by function (self time):\n" + top(self, Number(process.argv[3] ?? 35)).join("\n"));
console.log("\nby file or package:\n" + top(byPackage, 25).join("\n"));
