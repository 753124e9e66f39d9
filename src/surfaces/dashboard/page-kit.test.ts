import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ConflictError, ValidationError } from "../../domain/kernel/errors.js";
import { formFailure, plainWords } from "./page-kit.js";

describe("plain words for a form's errors", () => {
  // Each rewording of PLAIN_WORDS, from the message the schema or the domain gives.
  const cases: Array<[string, string]> = [
    ["Invalid input: expected string, received undefined", "This field is required."],
    ["is required", "This field is required."],
    ["Too small: expected string to have >=1 characters", "This field is required."],
    ["Too big: expected string to have <=200 characters", "Too long: at most 200 characters."],
    ["Invalid ISO date", "Enter a real date, as YYYY-MM-DD."],
    ["Invalid date", "Enter a real date, as YYYY-MM-DD."],
    ["Invalid email address", "Enter an email address such as billing@example.com."],
    ["Invalid input: expected number, received string", "Enter a whole number."],
    ["Invalid input: expected int, received number", "Enter a whole number."],
    ["Too small: expected number to be >=0", "Enter 0 or more."],
    ["Too big: expected number to be <=3650", "Enter 3650 or less."],
    ["is required on a flat rule (the price per unit)", "Enter a price per unit (or a rate, for a percentage price)."],
    ["is required on a percentage rule", "Enter the rate: a fraction, 0.029 is 2.9%."],
    ["is required on a usage rule", "Enter the metric: the name usage events send."],
    ["is for flat rules; a percentage rule has a rate", "Give a price per unit or a rate, not both."],
    ["is for percentage rules; a flat rule has an amount", "Give a price per unit or a rate, not both."],
    ['Invalid option: expected one of "usage"|"minimum"', "Choose one of usage, minimum."],
    [
      "amount must be a decimal number such as 12.5 (a JSON number or a string)",
      "Enter a number such as 12.50 (digits and one decimal point, no currency sign or commas).",
    ],
    [
      "must be a decimal number such as 12.5 (a JSON number or a string)",
      "Enter a number such as 12.50 (digits and one decimal point, no currency sign or commas).",
    ],
    ["amount must not be negative", "Enter zero or more: a price cannot be negative."],
    ["has more than 12 decimal places", "Too many decimals: at most 12 after the point."],
    [
      "amount has too many digits: at most 15 before the decimal point and 12 after it",
      "Too large: at most 15 digits before the decimal point.",
    ],
    [
      "must be less than 10^15 (at most 15 digits before the decimal point)",
      "Too large: at most 15 digits before the decimal point.",
    ],
    ["must be on or before to", "'From' must be on or before 'To'."],
  ];
  for (const [message, words] of cases)
    it(`"${message}" reads "${words}"`, () => assert.equal(plainWords(message), words));

  it("names a field by its label, capitalizes and ends a sentence it does not know", () => {
    assert.equal(
      plainWords("must be on or after start_date", { start_date: "the start date" }),
      "Must be on or after the start date.",
    );
    assert.equal(plainWords("Choose the rule to change."), "Choose the rule to change.");
  });
});

describe("a refused form", () => {
  it("puts each error the form has a field for beside it, and the rest in the summary", () => {
    const error = new ValidationError("Invalid terms", "invalid_terms", [
      { path: "rules.0.amount", message: "is required on a flat rule (the price per unit)" },
      { path: "currency", message: "is not a currency the service bills in" },
      { path: "rules", message: "Too big: expected array to have <=100 items" },
    ]);
    const failure = formFailure(error, (path) =>
      path === "rules.0.amount" ? "usage_amount_0" : path === "currency" ? "currency" : undefined,
    );
    assert.equal(failure.status, 400);
    assert.deepEqual(failure.fields, {
      usage_amount_0: "Enter a price per unit (or a rate, for a percentage price).",
      currency: "Is not a currency the service bills in.",
    });
    assert.equal(
      failure.flash.message,
      "2 fields need your attention: see the message beside each. Also: rules: Too big: expected array to have <=100 items.",
    );
  });

  it("keeps the service's sentence when no field is placed", () => {
    const failure = formFailure(new ConflictError("A contract with id 'x' already exists", "contract_exists"));
    assert.deepEqual(failure, {
      status: 409,
      flash: { kind: "error", message: "A contract with id 'x' already exists" },
      fields: {},
    });
  });

  it("lets an error that is not the domain's through (a 500 is a bug, not a form error)", () => {
    assert.throws(() => formFailure(new Error("boom")), /boom/);
  });
});
