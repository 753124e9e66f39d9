import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createCanvas } from "@napi-rs/canvas";
import { getDocument } from "pdfjs-dist/legacy/build/pdf.mjs";
import { createWorker, OEM } from "tesseract.js";
import { extractTerms } from "./src/domain/contracts/extraction/extract-terms.js";
const require = createRequire(import.meta.url);
const bytes = new Uint8Array(readFileSync(process.argv[2]!));
const dpi = Number(process.argv[3] ?? 200);
const skew = Number(process.argv[4] ?? 0.8);
const doc = await getDocument({ data: bytes }).promise;
const langPath = require.resolve("@tesseract.js-data/eng/package.json").replace(/package.json$/, "4.0.0_best_int");
const w = await createWorker("eng", OEM.LSTM_ONLY, { langPath, cacheMethod: "none", gzip: true });
const items: any[] = [];
const t0 = Date.now();
for (let p = 1; p <= doc.numPages; p++) {
  const page = await doc.getPage(p);
  const vp = page.getViewport({ scale: dpi / 72 });
  const c = createCanvas(Math.ceil(vp.width), Math.ceil(vp.height));
  const g = c.getContext("2d");
  g.fillStyle = "white";
  g.fillRect(0, 0, c.width, c.height);
  await page.render({ canvasContext: g as any, viewport: vp, canvas: c as any }).promise;
  const c2 = createCanvas(c.width, c.height);
  const g2 = c2.getContext("2d");
  g2.fillStyle = "white";
  g2.fillRect(0, 0, c.width, c.height);
  g2.translate(c.width / 2, c.height / 2);
  g2.rotate((skew * Math.PI) / 180);
  g2.drawImage(c, -c.width / 2, -c.height / 2);
  const img = c2.toBuffer("image/png");
  if (p === 1) writeFileSync("/tmp/scratch/page1.png", img);
  const r = await w.recognize(img, {}, { blocks: true });
  const scale = dpi / 72;
  const hPt = vp.height / scale;
  for (const b of r.data.blocks ?? [])
    for (const para of b.paragraphs)
      for (const line of para.lines) {
        const words = line.words;
        if (!words.length) continue;
        const height = (line.bbox.y1 - line.bbox.y0) / scale;
        const lineY = hPt - line.baseline.y0 / scale;
        let cur: any = null;
        for (const wd of words) {
          items.push({
            page: p,
            x: wd.bbox.x0 / scale,
            y: lineY,
            text: wd.text,
            height,
            width: (wd.bbox.x1 - wd.bbox.x0) / scale,
            conf: [wd.confidence],
          });
          continue;
          const x = wd.bbox.x0 / scale;
          if (cur && x - cur.end > 0.5 * height) {
            items.push(cur);
            cur = null;
          }
          if (!cur)
            cur = {
              page: p,
              x,
              y: lineY,
              text: wd.text,
              height: height * 0.75,
              width: 0,
              end: wd.bbox.x1 / scale,
              conf: [wd.confidence],
            };
          else {
            cur.text += " " + wd.text;
            cur.end = wd.bbox.x1 / scale;
            cur.conf.push(wd.confidence);
          }
          cur.width = cur.end - cur.x;
        }
        if (cur) items.push(cur);
      }
}
for (const it of items) {
  it.confidence = it.conf.reduce((a: number, b: number) => a + b, 0) / it.conf.length / 100;
  delete it.conf;
  delete it.end;
}
console.log("ocr ms", Date.now() - t0, items.length);
if (process.env.LINES)
  for (const it of items) console.log(it.page, it.x.toFixed(0), it.y.toFixed(0), it.confidence.toFixed(2), it.text);
const out = extractTerms(items, { sellerNames: [process.argv[5] ?? "Northwind Payments Ltd"] });
console.log(JSON.stringify(out.terms, null, 1));
await w.terminate();
if (process.env.BLOCKS) {
  const { layoutOf } = await import("./src/domain/contracts/extraction/text-layout.js");
  for (const b of layoutOf(items).blocks) console.log(b.page, JSON.stringify(b.text));
}
if (process.env.PARTS) {
  const { layoutOf } = await import("./src/domain/contracts/extraction/text-layout.js");
  for (const l of layoutOf(items).lines)
    if (l.y < 500 && l.y > 360)
      console.log(
        l.y.toFixed(0),
        l.size.toFixed(1),
        JSON.stringify(l.cells.flatMap((c) => c.parts.map((p) => `${p.x.toFixed(0)}:${p.text}`))),
      );
}
