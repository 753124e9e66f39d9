import { layoutOf } from "./src/domain/contracts/extraction/text-layout.js";
function page(lines: string[]) {
  return lines.flatMap((line, k) =>
    line
      .split("|")
      .map((cell, c) => ({
        page: 1,
        x: 72 + c * 200,
        y: 760 - k * 14,
        text: cell.trim(),
        height: 10,
        width: cell.trim().length * 5,
      })),
  );
}
for (const l of layoutOf(page(["Monthly volume|Price per call", "First 10,000|$0.010", "10,001 – 50,000|$0.008"]))
  .lines)
  console.log(JSON.stringify(l.cells.map((c) => c.parts)));
