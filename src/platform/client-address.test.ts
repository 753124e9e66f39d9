import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseTrustedProxies, trustedProxyCheck } from "./client-address.js";

describe("trusted proxies (BILLING_TRUSTED_PROXIES)", () => {
  const lists: Array<{ text: string; ranges?: string[]; refused?: string }> = [
    { text: "", ranges: [] },
    { text: " , ,", ranges: [] },
    { text: "10.0.0.7", ranges: ["10.0.0.7/32"] },
    { text: "10.0.0.0/8, 192.168.1.0/24 ,fd00::/8", ranges: ["10.0.0.0/8", "192.168.1.0/24", "fd00::/8"] },
    { text: "2001:DB8::1", ranges: ["2001:db8::1/128"] },
    { text: "0.0.0.0/0", ranges: ["0.0.0.0/0"] },
    { text: "10.1", refused: "10.1" },
    { text: "0x0a.0.0.1", refused: "0x0a.0.0.1" },
    { text: "10.0.0.0/33", refused: "10.0.0.0/33" },
    { text: "fd00::/129", refused: "fd00::/129" },
    { text: "10.0.0.0/", refused: "10.0.0.0/" },
    { text: "10.0.0.0/8/8", refused: "10.0.0.0/8/8" },
    { text: "10.0.0.0/-1", refused: "10.0.0.0/-1" },
    { text: "10.0.0.1, loopback", refused: "loopback" },
    { text: "fe80::1%eth0", refused: "fe80::1%eth0" },
    { text: "proxy.example.com", refused: "proxy.example.com" },
  ];
  for (const { text, ranges, refused } of lists) {
    it(`${refused ? "refuses" : "reads"} '${text}'`, () => {
      if (ranges) {
        assert.deepEqual(parseTrustedProxies(text), ranges);
        return;
      }
      assert.throws(
        () => parseTrustedProxies(text),
        (error: Error) => error.message.startsWith(`'${refused}' is not an IP address or a CIDR range`),
      );
    });
  }

  const trusts = trustedProxyCheck(parseTrustedProxies("10.0.0.0/8, 192.0.2.7, 2001:db8:1::/48"));
  const peers: Array<[string, boolean]> = [
    ["10.1.2.3", true],
    ["::ffff:10.1.2.3", true],
    ["192.0.2.7", true],
    ["192.0.2.8", false],
    ["11.0.0.1", false],
    ["2001:db8:1:ffff::1", true],
    ["2001:db8:2::1", false],
    ["not an address", false],
    ["", false],
  ];
  for (const [address, trusted] of peers) {
    it(`${trusted ? "trusts" : "does not trust"} '${address}'`, () => assert.equal(trusts(address), trusted));
  }

  it("trusts nobody with an empty list", () => {
    assert.equal(trustedProxyCheck([])("10.0.0.1"), false);
  });
});
