import { extractTerms } from "./src/domain/contracts/extraction/extract-terms.js";
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
const docs: Record<string, string[]> = {
  saas: [
    "ORDER FORM #Q-2026-311",
    'This Order Form is entered into by Northwind Payments Ltd ("Northwind") and the customer named below ("Customer").',
    "Customer: Bluebird Health, Inc.",
    "Billing Contact: Jane Doe",
    "Billing Email: accounts@bluebirdhealth.example",
    "Address: 55 Market St, San Francisco, CA 94105",
    "Subscription Term: 03/01/2026 – 02/28/2027",
    "Payment Terms: Net 45",
    "Description|Unit Price|Notes",
    "Platform subscription (monthly)|$2,000.00 per month|billed in advance",
    "SMS messages|$0.0075 per message|",
    "Voice minutes|$0.013 per minute|",
    "Late payments accrue interest of 1% per month. Prices increase by 3% annually.",
  ],
  german: [
    "SERVICES AGREEMENT",
    "between",
    'Northwind Payments Ltd, 1 Harbour Exchange Square, London E14 9GE (hereinafter "Supplier")',
    "and",
    'Müller Logistik GmbH, Hafenstraße 12, 20457 Hamburg, Germany (hereinafter "Client")',
    "§1 Term. The Agreement enters into force on 1 April 2026 and runs for 24 months.",
    "§2 Fees. All amounts are in EUR. The Client pays a monthly base fee of EUR 500.00.",
    "SEPA transfers are charged at EUR 0.12 per transfer. Card acquiring: 1.4% of transaction value plus EUR 0.10 per transaction.",
    "§3 Invoices are payable within 14 days of receipt of the invoice. Contact: finance@mueller-logistik.example",
  ],
  schedule: [
    "SCHEDULE A - FEES",
    "Fee|Amount",
    "Monthly minimum|$3,000.00",
    "Implementation fee (one-time)|$5,000.00",
    "Domestic wire|$12.00 per wire",
    "International wire (via Citibank N.A.)|$25.00 per wire",
    "Check deposit|$0.40 per item",
    "Total estimated monthly|$3,500.00",
  ],
};
for (const [name, lines] of Object.entries(docs)) {
  const out = extractTerms(page(lines), { sellerNames: ["Northwind Payments Ltd"] });
  console.log(
    "==",
    name,
    JSON.stringify(out.terms),
    out.warnings.map((w) => w.code),
  );
}
