import { layoutOf } from "./src/domain/contracts/extraction/text-layout.js";
function page(lines: string[]) {
  return lines.flatMap((line, k) =>
    line
      .split("|")
      .map((cell, c) => ({
        page: 1,
        x: 72 + c * 150,
        y: 760 - k * 14,
        text: cell.trim(),
        height: 10,
        width: cell.trim().length * 5,
      })),
  );
}
const l = layoutOf(
  page([
    "Description|Unit Price|Notes",
    "Platform subscription (monthly)|$2,000.00 per month|billed in advance",
    "SMS messages|$0.0075 per message|",
    "Voice minutes|$0.013 per minute|",
  ]),
);
for (const line of l.lines) console.log(line.cells.map((c) => `${c.x}:${c.text}`));
