import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { it } from "node:test";
import { describeEachEngine, type TestApp } from "../support/harness.js";
import { createCustomer } from "../support/api.js";
import { expectError } from "../support/assertions.js";

const CUSTOMERS = "/v1/billing/customers";

interface ListBody {
  object: string;
  data: { id: string; name: string; external_id: string | null; created_at: string }[];
  has_more: boolean;
  total_count: number;
}

async function page(t: TestApp, key: string, query: string): Promise<ListBody> {
  const res = await t.call({ method: "GET", url: `${CUSTOMERS}${query ? `?${query}` : ""}`, key });
  assert.equal(res.statusCode, 200, res.body);
  const body = res.json() as ListBody;
  assert.equal(body.object, "list");
  assert.equal(body.total_count, body.data.length, "total_count is the number of items in this page");
  return body;
}

/** Creates `count` customers, advancing the clock by `stepMs` before each; returns them oldest first. */
async function seed(t: TestApp, key: string, count: number, stepMs = 1000): Promise<{ id: string; name: string }[]> {
  const made = [];
  for (let i = 0; i < count; i++) {
    if (stepMs > 0) t.clock.advance(stepMs);
    made.push(await createCustomer(t, key, { name: `Customer ${i}` }));
  }
  return made as { id: string; name: string }[];
}

/** Follows `starting_after` until `has_more` is false; returns every page. */
async function walk(t: TestApp, key: string, limit: number, extra = ""): Promise<ListBody[]> {
  const pages: ListBody[] = [];
  let cursor: string | undefined;
  for (let guard = 0; guard < 1000; guard++) {
    const query = [`limit=${limit}`, cursor ? `starting_after=${cursor}` : "", extra].filter(Boolean).join("&");
    const current = await page(t, key, query);
    pages.push(current);
    if (!current.has_more) return pages;
    cursor = current.data.at(-1)!.id;
  }
  throw new Error("pagination never ended");
}

describeEachEngine("customer list pagination", (t) => {
  it("lists customers newest first", async () => {
    const { key } = await t().newCompany();
    const made = await seed(t(), key, 5);
    const list = await page(t(), key, "");
    assert.deepEqual(
      list.data.map((c) => c.id),
      made.map((c) => c.id).reverse(),
    );
    const times = list.data.map((c) => Date.parse(c.created_at));
    assert.deepEqual(
      [...times].sort((a, b) => b - a),
      times,
    );
    assert.equal(list.has_more, false);
  });

  it("returns 50 customers by default and says there are more", async () => {
    const { key } = await t().newCompany();
    const made = await seed(t(), key, 51, 1);
    const first = await page(t(), key, "");
    assert.equal(first.data.length, 50);
    assert.equal(first.total_count, 50);
    assert.equal(first.has_more, true);
    const rest = await page(t(), key, `starting_after=${first.data.at(-1)!.id}`);
    assert.equal(rest.data.length, 1);
    assert.equal(rest.has_more, false);
    assert.deepEqual(
      [...first.data, ...rest.data].map((c) => c.id),
      made.map((c) => c.id).reverse(),
    );
  });

  it("accepts limits 1 and 100", async () => {
    const { key } = await t().newCompany();
    await seed(t(), key, 3);
    const one = await page(t(), key, "limit=1");
    assert.equal(one.data.length, 1);
    assert.equal(one.has_more, true);
    const hundred = await page(t(), key, "limit=100");
    assert.equal(hundred.data.length, 3);
    assert.equal(hundred.has_more, false);
  });

  for (const limit of ["0", "101", "-1", "1000", "1.5", "abc", "", "1e1000"]) {
    it(`answers 400 to limit=${limit}`, async () => {
      const { key } = await t().newCompany();
      const res = await t().call({ method: "GET", url: `${CUSTOMERS}?limit=${limit}`, key });
      const body = expectError(res, 400, "invalid_request");
      assert.match(body.error, /limit/);
    });
  }

  it("walks every customer exactly once by following starting_after while has_more is true", async () => {
    const { key } = await t().newCompany();
    const made = await seed(t(), key, 7);
    const pages = await walk(t(), key, 3);
    assert.deepEqual(
      pages.map((p) => p.data.length),
      [3, 3, 1],
    );
    assert.deepEqual(
      pages.map((p) => p.has_more),
      [true, true, false],
    );
    assert.deepEqual(
      pages.flatMap((p) => p.data.map((c) => c.id)),
      made.map((c) => c.id).reverse(),
    );
  });

  it("says has_more is false on a page that ends exactly at the last customer", async () => {
    const { key } = await t().newCompany();
    await seed(t(), key, 4);
    const pages = await walk(t(), key, 2);
    assert.deepEqual(
      pages.map((p) => [p.data.length, p.has_more]),
      [
        [2, true],
        [2, false],
      ],
    );
  });

  it("answers an empty page after the oldest customer", async () => {
    const { key } = await t().newCompany();
    const made = await seed(t(), key, 2);
    const after = await page(t(), key, `starting_after=${made[0]!.id}`);
    assert.deepEqual(after.data, []);
    assert.equal(after.has_more, false);
    assert.equal(after.total_count, 0);
  });

  it("counts only the current page in total_count", async () => {
    const { key } = await t().newCompany();
    await seed(t(), key, 5);
    const first = await page(t(), key, "limit=2");
    assert.equal(first.total_count, 2);
  });

  it("answers an empty list for a company without customers", async () => {
    const { key } = await t().newCompany();
    const list = await page(t(), key, "");
    assert.deepEqual(list, { object: "list", data: [], has_more: false, total_count: 0 });
  });

  it("walks customers created in the same millisecond without skipping or repeating any", async () => {
    const { key } = await t().newCompany();
    const made = await seed(t(), key, 7, 0);
    const pages = await walk(t(), key, 2);
    const walked = pages.flatMap((p) => p.data.map((c) => c.id));
    assert.equal(new Set(walked).size, 7);
    assert.deepEqual([...walked].sort(), made.map((c) => c.id).sort());
    const single = await page(t(), key, "limit=100");
    assert.deepEqual(
      walked,
      single.data.map((c) => c.id),
      "paging gives the same order as one big page",
    );
  });

  it("keeps later pages stable when a customer is created between two page reads", async () => {
    const { key } = await t().newCompany();
    const made = await seed(t(), key, 4);
    const first = await page(t(), key, "limit=2");
    t().clock.advance(1000);
    const newcomer = await createCustomer(t(), key, { name: "Newcomer" });
    const second = await page(t(), key, `limit=2&starting_after=${first.data.at(-1)!.id}`);
    assert.deepEqual(
      second.data.map((c) => c.id),
      [made[1]!.id, made[0]!.id],
    );
    assert.equal((await page(t(), key, "limit=1")).data[0]!.id, newcomer.id, "the newcomer heads the first page");
  });

  it("answers 400 invalid_cursor when starting_after names no customer", async () => {
    const { key } = await t().newCompany();
    await seed(t(), key, 2);
    for (const cursor of [randomUUID(), "not-a-customer-id", "INV-000001"]) {
      const res = await t().call({ method: "GET", url: `${CUSTOMERS}?starting_after=${cursor}`, key });
      expectError(res, 400, "invalid_cursor");
    }
  });

  it("answers 400 rather than failing when starting_after or external_id contain a NUL character", async () => {
    const { key } = await t().newCompany();
    for (const query of ["starting_after=%00", "external_id=%00", "external_id=a%00b"]) {
      const res = await t().call({ method: "GET", url: `${CUSTOMERS}?${query}`, key });
      expectError(res, 400);
    }
  });

  it("filters the list to the customer with the given external_id", async () => {
    const { key } = await t().newCompany();
    t().clock.advance(1000);
    await createCustomer(t(), key, { name: "First", external_id: "ext-1" });
    t().clock.advance(1000);
    const second = await createCustomer(t(), key, { name: "Second", external_id: "ext-2" });
    t().clock.advance(1000);
    await createCustomer(t(), key, { name: "No external id" });
    const filtered = await page(t(), key, "external_id=ext-2");
    assert.deepEqual(filtered.data, [second]);
    assert.equal(filtered.has_more, false);
    assert.equal(filtered.total_count, 1);
  });

  it("answers an empty list for an external_id nobody has, and does not match it against names", async () => {
    const { key } = await t().newCompany();
    await createCustomer(t(), key, { name: "vip" });
    await createCustomer(t(), key, { name: "Other", external_id: "VIP" });
    const filtered = await page(t(), key, "external_id=vip");
    assert.deepEqual(filtered.data, []);
    assert.equal(filtered.has_more, false);
  });

  it("answers 400 to an empty external_id filter", async () => {
    const { key } = await t().newCompany();
    expectError(await t().call({ method: "GET", url: `${CUSTOMERS}?external_id=`, key }), 400);
  });
});
