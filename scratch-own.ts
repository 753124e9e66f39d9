import { writeFileSync } from "node:fs";
import { renderAgreementPdf } from "./src/domain/contracts/agreement-pdf.js";
import { agreementInput } from "./test/fixtures/agreement-input.js";
const pdf = await renderAgreementPdf(
  agreementInput({
    minimumAmount: "1000.00",
    rules: [
      {
        id: "r1",
        name: "Card payments",
        type: "usage",
        model: "percentage",
        rate: "0.029",
        metric: "card_payments",
        fixed_fee: "0.30",
        monthly_cap: "5000.00",
      },
      { id: "r2", name: "ACH debit origination", type: "usage", model: "flat", amount: "0.28", metric: "ach_debit" },
      {
        id: "r3",
        name: "Wires to HSBC",
        type: "usage",
        model: "flat",
        amount: "18.00",
        metric: "wire",
        counterparty: "HSBC UK",
      },
      { id: "r4", name: "Platform", type: "subscription", model: "flat", amount: "250.00", frequency: "monthly" },
      { id: "m", name: "Minimum", type: "minimum", model: "flat", amount: "1000.00" },
    ] as never,
  }),
);
writeFileSync("/tmp/scratch/own.pdf", pdf);
