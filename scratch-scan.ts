import { readFileSync, writeFileSync } from "node:fs";
import { createCanvas } from "@napi-rs/canvas";
import { getDocument } from "pdfjs-dist/legacy/build/pdf.mjs";
import PDFDocument from "pdfkit";
const [src, out, dpiArg, skewArg] = process.argv.slice(2);
const dpi = Number(dpiArg ?? 200),
  skew = Number(skewArg ?? 0.8);
const doc = await getDocument({ data: new Uint8Array(readFileSync(src!)), verbosity: 0 }).promise;
const pdf = new PDFDocument({ autoFirstPage: false });
const chunks: Buffer[] = [];
pdf.on("data", (c) => chunks.push(c));
let seed = 7;
const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
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
  const img = g2.getImageData(0, 0, c.width, c.height);
  for (let i = 0; i < img.data.length; i += 4) {
    const v = 0.3 * img.data[i]! + 0.59 * img.data[i + 1]! + 0.11 * img.data[i + 2]!;
    const n = rnd() < 0.004 ? (v > 128 ? 0 : 255) : v + (rnd() - 0.5) * 40;
    img.data[i] = img.data[i + 1] = img.data[i + 2] = Math.max(0, Math.min(255, n));
  }
  g2.setTransform(1, 0, 0, 1, 0, 0);
  g2.putImageData(img, 0, 0);
  const jpg = c2.toBuffer("image/jpeg", 70);
  const w = vp.width / (dpi / 72),
    h = vp.height / (dpi / 72);
  pdf.addPage({ size: [w, h], margin: 0 });
  pdf.image(jpg, 0, 0, { width: w, height: h });
}
pdf.end();
await new Promise((r) => pdf.on("end", r));
writeFileSync(out!, Buffer.concat(chunks));
console.log("wrote", out, Buffer.concat(chunks).length);
