import { readFileSync } from "node:fs";
import PDFDocument from "pdfkit";
import { readAgreementForExtraction } from "./src/domain/contracts/agreement-upload.js";
import { extractTerms } from "./src/domain/contracts/extraction/extract-terms.js";

async function prosePdf(): Promise<Buffer> {
  const doc = new PDFDocument({ size: "A4", margin: 60 });
  const chunks: Buffer[] = [];
  doc.on("data", (c) => chunks.push(c));
  doc.fontSize(16).text("MASTER SERVICES AGREEMENT", { align: "center" }).moveDown();
  doc.fontSize(10).text("Agreement No. MSA-2026-0142").moveDown();
  doc
    .text(
      'This Master Services Agreement is made between Northwind Payments Ltd, a company registered in England with its registered office at 1 Harbour Exchange Square, London E14 9GE ("Provider"), and Harbor Freight Logistics Inc., a Delaware corporation with its principal place of business at 400 Pier Avenue, Suite 12, Oakland, CA 94607 ("Customer").',
    )
    .moveDown();
  doc
    .text(
      "1. Term. This Agreement is effective January 5, 2026 and ends on January 4, 2027 unless terminated earlier. Either party may terminate on 30 days' notice.",
    )
    .moveDown();
  doc
    .text(
      "2. Fees. All fees are stated in US dollars. Customer commits to a minimum monthly commitment of $1,500.00. Customer shall pay a platform fee of $250.00 per month.",
    )
    .moveDown();
  doc
    .text(
      "3. Usage. Card processing is charged at 2.35% of card volume, capped at $4,000 per month. Provider charges $0.28 per ACH debit and $18.00 per international wire to HSBC UK.",
    )
    .moveDown();
  doc
    .text(
      "4. Payment. Customer shall pay each invoice within fifteen (15) days of its date. Invoices are sent to ap@harborfreight-logistics.example. Late amounts bear interest at 1.5% per month.",
    )
    .moveDown();
  doc.text(
    "5. Liability. Each party's aggregate liability is capped at $1,000,000. Notices to Provider go to contracts@northwind.example.",
  );
  doc.end();
  await new Promise((r) => doc.on("end", r));
  return Buffer.concat(chunks);
}
const file = process.argv[2];
if (process.env.SAVE) {
  (await import("node:fs")).writeFileSync(process.env.SAVE, await prosePdf());
  process.exit(0);
}
const bytes = file ? readFileSync(file) : await prosePdf();
const seller = process.argv[3] ?? "Northwind Payments Ltd";
const reading = await readAgreementForExtraction("scratch", { filename: "a.pdf", bytes });
const t = Date.now();
const out = extractTerms(reading.items, { sellerNames: [seller] });
console.log(JSON.stringify(out.terms, null, 1));
if (process.env.FIELDS)
  for (const f of out.fields)
    console.log(f.field, JSON.stringify(f.value), f.confidence, f.page, "|", f.source_text.slice(0, 120));
console.log(out.warnings, reading.warnings, Date.now() - t, "ms");
