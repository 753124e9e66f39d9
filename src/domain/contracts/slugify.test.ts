import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { minimumTermsOf, termsTotal } from "./minimum-terms.js";
import { sampleRules, slugify } from "./sample-contracts.js";
import { metricsOf } from "./pricing-rule.js";

const SLUG_RE = /^[a-z0-9]+(-[a-z0-9]+)*$/;

describe("slugify", () => {
  const cases: Array<{ name: string; input: string; slug: string }> = [
    { name: "lower-cases a plain name and joins words with a dash", input: "Acme Corp", slug: "acme-corp" },
    { name: "strips accents from a French name", input: "Société Générale", slug: "societe-generale" },
    { name: "strips accents and drops punctuation", input: "Crème Brûlée & Co.", slug: "creme-brulee-co" },
    { name: "strips stacked Vietnamese diacritics", input: "Nguyễn Văn Ân", slug: "nguyen-van-an" },
    { name: "strips a German umlaut to its base letter", input: "Müller GmbH", slug: "muller-gmbh" },
    { name: "turns a comma and a full stop into one dash", input: "ACME, Inc.", slug: "acme-inc" },
    { name: "turns an apostrophe into a dash", input: "O'Reilly Media", slug: "o-reilly-media" },
    { name: "collapses runs of spaces and dashes", input: "Hello   --  World", slug: "hello-world" },
    { name: "trims leading and trailing separators", input: "  --Hello World!--  ", slug: "hello-world" },
    { name: "keeps digits", input: "3M Company 2026", slug: "3m-company-2026" },
    { name: "folds full-width letters to ASCII", input: "ＡＣＭＥ", slug: "acme" },
    { name: "folds a ligature to its letters", input: "ﬁnance", slug: "finance" },
    { name: "keeps the Latin part of a mixed-script name", input: "株式会社 Sony", slug: "sony" },
    { name: "falls back to customer for an empty name", input: "", slug: "customer" },
    { name: "falls back to customer for a blank name", input: "   ", slug: "customer" },
    { name: "falls back to customer for a CJK-only name", input: "株式会社", slug: "customer" },
    { name: "falls back to customer for a Cyrillic-only name", input: "Газпром", slug: "customer" },
    { name: "falls back to customer for punctuation only", input: "!!! ---", slug: "customer" },
    { name: "falls back to customer for emoji only", input: "🚀✨", slug: "customer" },
    { name: "caps the slug at 48 characters", input: "a".repeat(60), slug: "a".repeat(48) },
    {
      name: "does not end on a dash when the cap falls on a separator",
      input: `${"a".repeat(47)} bcd`,
      slug: "a".repeat(47),
    },
    { name: "keeps a word cut by the cap", input: `${"a".repeat(40)} bcdefghijk`, slug: `${"a".repeat(40)}-bcdefgh` },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const slug = slugify(c.input);
      assert.equal(slug, c.slug);
      assert.match(slug, SLUG_RE);
      assert.ok(slug.length <= 48);
    });
  }
});

describe("sampleRules", () => {
  it("prices domestic wires at 20.00 and international wires at 30.00 per unit", () => {
    const [domestic, international] = sampleRules();
    assert.deepEqual(
      [domestic, international].map((r) => [r?.name, r?.type, r?.model, r?.metric, r?.amount, r?.currency]),
      [
        ["Domestic wire", "usage", "flat", "domestic_wire", "20.00", "USD"],
        ["International wire", "usage", "flat", "international_wire", "30.00", "USD"],
      ],
    );
  });

  it("has the monthly minimum that docs/decisions.md describes", () => {
    const minimum = sampleRules().find((r) => r.type === "minimum");
    assert.ok(minimum);
    assert.deepEqual(
      {
        type: minimum.type,
        model: minimum.model,
        amount: minimum.amount,
        frequency: minimum.frequency,
        currency: minimum.currency,
      },
      { type: "minimum", model: "flat", amount: "1000.00", frequency: "monthly", currency: "USD" },
    );
    assert.equal(termsTotal(minimumTermsOf(sampleRules()))?.toFixed(), "1000");
  });

  it("accepts exactly the two wire metrics", () => {
    assert.deepEqual(metricsOf(sampleRules()), ["domestic_wire", "international_wire"]);
  });

  it("gives every rule its own id, new on each call", () => {
    const first = sampleRules().map((r) => r.id);
    const second = sampleRules().map((r) => r.id);
    assert.equal(new Set([...first, ...second]).size, 6);
  });
});
