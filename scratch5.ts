import { extractTerms } from "./src/domain/contracts/extraction/extract-terms.js";
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
const lines = process.argv.slice(2).length
  ? process.argv.slice(2)
  : [
      "Fees",
      "• Transaction fee: $0.25 per transaction",
      "• Chargebacks: $15.00 each",
      "• Monthly platform fee: $99.00",
      "• Late fee: $25.00 per late invoice",
      "(a) Refunds: $0.10 per refund",
    ];
const out = extractTerms(page(lines), { sellerNames: ["Northwind Payments Ltd"] });
console.log(JSON.stringify(out.terms));
