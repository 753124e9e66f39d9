import { readFileSync } from "node:fs";
import { readAgreementForExtraction } from "./src/domain/contracts/agreement-upload.js";
import { layoutOf } from "./src/domain/contracts/extraction/text-layout.js";
const r = await readAgreementForExtraction("x", { filename: "a.pdf", bytes: readFileSync(process.argv[2]!) });
const l = layoutOf(r.items);
if (process.env.LINES)
  for (const line of l.lines)
    console.log(
      line.page,
      line.y.toFixed(1),
      line.size.toFixed(1),
      line.confidence.toFixed(2),
      JSON.stringify(line.cells.flatMap((c) => c.parts.map((p) => `${p.x.toFixed(0)}:${p.text}`))),
    );
else for (const b of l.blocks) console.log(b.page, JSON.stringify(b.text));
if (process.env.FLOWS) {
  const { flowsOf } = await import("./src/domain/contracts/extraction/text-layout.js");
  for (const f of flowsOf(l)) console.log("FLOW", JSON.stringify(f.text.slice(0, 400)));
}
