import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { checkEndpointUrl, isPublicAddress } from "./address-policy.js";

describe("isPublicAddress", () => {
  const notPublic: Array<{ name: string; address: string }> = [
    // IPv4
    { name: "refuses the IPv4 loopback address", address: "127.0.0.1" },
    { name: "refuses the far end of 127/8", address: "127.255.255.254" },
    { name: "refuses 10/8", address: "10.0.0.1" },
    { name: "refuses the top of 10/8", address: "10.255.255.255" },
    { name: "refuses the bottom of 172.16/12", address: "172.16.0.1" },
    { name: "refuses the top of 172.16/12", address: "172.31.255.254" },
    { name: "refuses 192.168/16", address: "192.168.1.1" },
    { name: "refuses IPv4 link-local", address: "169.254.1.1" },
    { name: "refuses the cloud metadata address 169.254.169.254", address: "169.254.169.254" },
    { name: "refuses CGNAT 100.64/10", address: "100.64.0.1" },
    { name: "refuses the top of CGNAT 100.64/10", address: "100.127.255.254" },
    { name: "refuses the Alibaba metadata address 100.100.100.200", address: "100.100.100.200" },
    { name: "refuses IPv4 multicast", address: "224.0.0.1" },
    { name: "refuses the top of IPv4 multicast", address: "239.255.255.255" },
    { name: "refuses the unspecified IPv4 address", address: "0.0.0.0" },
    { name: "refuses the rest of 0/8", address: "0.1.2.3" },
    { name: "refuses the limited broadcast address", address: "255.255.255.255" },
    { name: "refuses 192.0.0/24 (IETF protocol assignments)", address: "192.0.0.170" },
    { name: "refuses TEST-NET-1 192.0.2/24", address: "192.0.2.10" },
    { name: "refuses the benchmarking range 198.18/15", address: "198.18.0.1" },
    { name: "refuses the top of the benchmarking range 198.19/16", address: "198.19.255.254" },
    { name: "refuses TEST-NET-2 198.51.100/24", address: "198.51.100.7" },
    { name: "refuses TEST-NET-3 203.0.113/24", address: "203.0.113.9" },
    { name: "refuses the reserved range 240/4", address: "240.0.0.1" },
    { name: "refuses the top of 240/4 below broadcast", address: "255.255.255.254" },
    { name: "refuses the 6to4 relay anycast range 192.88.99/24", address: "192.88.99.1" },
    // IPv4 spellings that are not plain dotted decimal
    { name: "refuses a 32-bit decimal IPv4 spelling", address: "2130706433" },
    { name: "refuses a hexadecimal IPv4 spelling", address: "0x7f.1" },
    { name: "refuses an octal IPv4 spelling", address: "0177.0.0.1" },
    { name: "refuses a leading-zero spelling even of a public address", address: "093.184.216.034" },
    { name: "refuses a shorthand spelling even of a public address", address: "8.8.2056" },
    // IPv6
    { name: "refuses the IPv6 loopback address", address: "::1" },
    { name: "refuses the IPv6 loopback address written in full", address: "0:0:0:0:0:0:0:1" },
    { name: "refuses the unspecified IPv6 address", address: "::" },
    { name: "refuses IPv6 link-local fe80::/10", address: "fe80::1" },
    { name: "refuses the top of IPv6 link-local fe80::/10", address: "febf::1" },
    { name: "refuses unique-local fc00::/7 (fc half)", address: "fc00::1" },
    { name: "refuses unique-local fc00::/7 (fd half)", address: "fd12:3456:789a::1" },
    { name: "refuses the AWS IPv6 metadata address fd00:ec2::254", address: "fd00:ec2::254" },
    { name: "refuses site-local fec0::/10", address: "fec0::1" },
    { name: "refuses IPv6 multicast", address: "ff02::1" },
    { name: "refuses IPv6 documentation 2001:db8::/32", address: "2001:db8::1" },
    { name: "refuses IPv6 benchmarking 2001:2::/48", address: "2001:2::1" },
    { name: "refuses the IPv6 discard prefix 100::/64", address: "100::1" },
    { name: "refuses the local-use NAT64 prefix 64:ff9b:1::/48", address: "64:ff9b:1::808:808" },
    { name: "refuses IPv6 outside 2000::/3", address: "4000::1" },
    { name: "refuses a link-local address with a zone id", address: "fe80::1%eth0" },
    { name: "refuses a zone id even on a global address", address: "2606:2800:220:1::1%eth0" },
    // IPv4 embedded in IPv6
    { name: "refuses IPv4-mapped loopback in dotted form", address: "::ffff:127.0.0.1" },
    { name: "refuses IPv4-mapped loopback in hex form", address: "::ffff:7f00:1" },
    { name: "refuses IPv4-mapped loopback written in full", address: "0:0:0:0:0:ffff:7f00:0001" },
    { name: "refuses IPv4-mapped 10/8", address: "::ffff:10.0.0.1" },
    { name: "refuses IPv4-mapped metadata address", address: "::ffff:169.254.169.254" },
    { name: "refuses IPv4-mapped CGNAT", address: "::ffff:100.100.100.200" },
    { name: "refuses IPv4-mapped unspecified", address: "::ffff:0.0.0.0" },
    { name: "refuses IPv4-translated (::ffff:0:0/96) loopback", address: "::ffff:0:127.0.0.1" },
    { name: "refuses IPv4-compatible loopback", address: "::127.0.0.1" },
    { name: "refuses IPv4-compatible loopback in hex form", address: "::7f00:1" },
    { name: "refuses IPv4-compatible forms even of a public address", address: "::8.8.8.8" },
    { name: "refuses NAT64 of loopback", address: "64:ff9b::127.0.0.1" },
    { name: "refuses NAT64 of loopback in hex form", address: "64:ff9b::7f00:1" },
    { name: "refuses NAT64 of the metadata address", address: "64:ff9b::a9fe:a9fe" },
    { name: "refuses NAT64 of 192.168/16", address: "64:ff9b::c0a8:101" },
    { name: "refuses 6to4 of loopback", address: "2002:7f00:1::1" },
    { name: "refuses 6to4 of 10/8", address: "2002:a00:1::" },
    { name: "refuses 6to4 of the metadata address", address: "2002:a9fe:a9fe::1" },
    { name: "refuses Teredo whose client is loopback (inverted 127.0.0.1)", address: "2001:0:5db8:d822:0:0:80ff:fffe" },
    { name: "refuses Teredo whose server is private", address: "2001:0:a00:1:0:0:f7f7:f7f7" },
    { name: "refuses a mapped form whose dotted tail is not plain decimal", address: "::ffff:0x7f.0.0.1" },
    // Unparseable
    { name: "refuses the empty string", address: "" },
    { name: "refuses a host name", address: "localhost" },
    { name: "refuses a bracketed IPv6 literal", address: "[::1]" },
    { name: "refuses an address with surrounding spaces", address: " 8.8.8.8 " },
    { name: "refuses an address with a port", address: "8.8.8.8:443" },
    { name: "refuses an IPv4 octet above 255", address: "256.1.1.1" },
    { name: "refuses an IPv6 group longer than four digits", address: "2606:28000::1" },
    { name: "refuses a CIDR range", address: "8.8.8.0/24" },
  ];
  for (const c of notPublic) {
    it(c.name, () => assert.equal(isPublicAddress(c.address), false));
  }

  const publicAddresses: Array<{ name: string; address: string }> = [
    { name: "accepts a public IPv4 address", address: "93.184.216.34" },
    { name: "accepts 8.8.8.8", address: "8.8.8.8" },
    { name: "accepts 1.1.1.1", address: "1.1.1.1" },
    { name: "accepts the address just below 10/8", address: "9.255.255.255" },
    { name: "accepts the address just above 172.16/12", address: "172.32.0.1" },
    { name: "accepts the address just below 172.16/12", address: "172.15.255.255" },
    { name: "accepts the address just below CGNAT", address: "100.63.255.255" },
    { name: "accepts the address just above CGNAT", address: "100.128.0.1" },
    { name: "accepts the address just above 198.18/15", address: "198.20.0.1" },
    { name: "accepts the address just below 224/4", address: "223.255.255.254" },
    { name: "accepts a public IPv6 address", address: "2606:2800:220:1::" },
    { name: "accepts a public IPv6 address with an interface id", address: "2606:2800:220:1:248:1893:25c8:1946" },
    { name: "accepts Google's public IPv6 DNS", address: "2001:4860:4860::8888" },
    { name: "accepts upper-case IPv6", address: "2A00:1450:4001:82A::200E" },
    { name: "accepts IPv4-mapped form of a public address", address: "::ffff:93.184.216.34" },
    { name: "accepts IPv4-mapped hex form of a public address", address: "::ffff:5db8:d822" },
    { name: "accepts NAT64 of a public address", address: "64:ff9b::93.184.216.34" },
    { name: "accepts 6to4 of a public address", address: "2002:5db8:d822::1" },
    { name: "accepts Teredo whose server and client are public", address: "2001:0:5db8:d822:0:0:f7f7:f7f7" },
  ];
  for (const c of publicAddresses) {
    it(c.name, () => assert.equal(isPublicAddress(c.address), true));
  }
});

describe("checkEndpointUrl", () => {
  const refused: Array<{ name: string; url: string; allowPrivate?: boolean; reason: RegExp }> = [
    { name: "refuses http:// when private targets are not allowed", url: "http://example.com/hook", reason: /https/ },
    {
      name: "refuses ftp:// even when private targets are allowed",
      url: "ftp://example.com/hook",
      allowPrivate: true,
      reason: /https/,
    },
    { name: "refuses a javascript: URL", url: "javascript:alert(1)", allowPrivate: true, reason: /https/ },
    { name: "refuses a file: URL", url: "file:///etc/passwd", allowPrivate: true, reason: /https/ },
    {
      name: "refuses a URL with a user name and password",
      url: "https://user:secret@example.com/hook",
      reason: /credentials/,
    },
    { name: "refuses a URL with only a user name", url: "https://user@example.com/hook", reason: /credentials/ },
    { name: "refuses a URL with only a password", url: "https://:secret@example.com/hook", reason: /credentials/ },
    {
      name: "refuses credentials even when private targets are allowed",
      url: "https://u:p@example.com/",
      allowPrivate: true,
      reason: /credentials/,
    },
    { name: "refuses port 0", url: "https://example.com:0/hook", reason: /port/ },
    { name: "refuses a port above 65535", url: "https://example.com:65536/hook", reason: /valid URL/ },
    { name: "refuses a relative URL", url: "/hooks/billing", reason: /valid URL/ },
    { name: "refuses a URL with an empty host and a port", url: "https://:443/hook", reason: /valid URL|host/ },
    { name: "refuses a URL with nothing after the scheme", url: "https://", reason: /valid URL|host/ },
    { name: "refuses text that is not a URL", url: "not a url", reason: /whitespace|valid URL/ },
    { name: "refuses the empty string", url: "", reason: /empty/ },
    {
      name: "refuses a URL longer than 2048 characters",
      url: `https://example.com/${"a".repeat(2029)}`,
      reason: /2048/,
    },
    { name: "refuses a URL with a space", url: "https://example.com/a b", reason: /whitespace/ },
    { name: "refuses a URL with a tab the parser would drop", url: "https://exam\tple.com/", reason: /whitespace/ },
    {
      name: "refuses a URL with a newline the parser would drop",
      url: "https://example.com/\nhook",
      reason: /whitespace/,
    },
    { name: "refuses leading spaces the parser would trim", url: " https://example.com/", reason: /whitespace/ },
    { name: "refuses the IPv4 loopback literal", url: "https://127.0.0.1/hook", reason: /127\.0\.0\.1 is not public/ },
    { name: "refuses loopback with a port", url: "https://127.0.0.1:8443/hook", reason: /not public/ },
    {
      name: "refuses loopback written as one decimal number",
      url: "https://2130706433/",
      reason: /127\.0\.0\.1 is not public/,
    },
    {
      name: "refuses loopback written in hexadecimal shorthand",
      url: "https://0x7f.1/",
      reason: /127\.0\.0\.1 is not public/,
    },
    {
      name: "refuses loopback written in hexadecimal octets",
      url: "https://0x7f.0x0.0x0.0x1/",
      reason: /127\.0\.0\.1 is not public/,
    },
    { name: "refuses loopback written in octal", url: "https://0177.0.0.1/", reason: /127\.0\.0\.1 is not public/ },
    {
      name: "refuses loopback written as dotted shorthand",
      url: "https://127.1/",
      reason: /127\.0\.0\.1 is not public/,
    },
    {
      name: "refuses loopback with percent-encoded digits",
      url: "https://%31%32%37.0.0.1/",
      reason: /127\.0\.0\.1 is not public/,
    },
    { name: "refuses loopback with a trailing dot", url: "https://127.0.0.1./", reason: /127\.0\.0\.1 is not public/ },
    {
      name: "refuses the metadata address written as one decimal number",
      url: "https://2852039166/latest/meta-data/",
      reason: /169\.254\.169\.254/,
    },
    {
      name: "refuses the metadata address literal",
      url: "https://169.254.169.254/latest/meta-data/",
      reason: /not public/,
    },
    { name: "refuses a private IPv4 literal", url: "https://10.1.2.3/", reason: /not public/ },
    { name: "refuses a CGNAT IPv4 literal", url: "https://100.100.100.200/", reason: /not public/ },
    { name: "refuses the unspecified IPv4 literal", url: "https://0.0.0.0/", reason: /not public/ },
    {
      name: "refuses the unspecified IPv4 literal written as 0",
      url: "https://0/",
      reason: /0\.0\.0\.0 is not public/,
    },
    { name: "refuses a documentation IPv4 literal", url: "https://203.0.113.5/", reason: /not public/ },
    { name: "refuses the IPv6 loopback literal", url: "https://[::1]/hook", reason: /::1 is not public/ },
    { name: "refuses the unspecified IPv6 literal", url: "https://[::]/", reason: /not public/ },
    { name: "refuses an IPv6 link-local literal", url: "https://[fe80::1]/", reason: /not public/ },
    { name: "refuses an IPv6 unique-local literal", url: "https://[fd00:ec2::254]/", reason: /not public/ },
    { name: "refuses an IPv6 site-local literal", url: "https://[fec0::1]/", reason: /not public/ },
    { name: "refuses an IPv4-mapped loopback literal", url: "https://[::ffff:127.0.0.1]/", reason: /not public/ },
    {
      name: "refuses an IPv4-mapped metadata literal in hex",
      url: "https://[::ffff:a9fe:a9fe]/",
      reason: /not public/,
    },
    { name: "refuses a NAT64 loopback literal", url: "https://[64:ff9b::127.0.0.1]/", reason: /not public/ },
    { name: "refuses a 6to4 private literal", url: "https://[2002:c0a8:101::1]/", reason: /not public/ },
    {
      name: "refuses an IPv6 literal with a zone id",
      url: "https://[fe80::1%25eth0]/",
      reason: /valid URL|not public/,
    },
  ];
  for (const c of refused) {
    it(c.name, () => {
      const verdict = checkEndpointUrl(c.url, { allowPrivate: c.allowPrivate ?? false });
      assert.equal(verdict.ok, false);
      if (!verdict.ok) assert.match(verdict.reason, c.reason);
    });
  }

  // Which refusals allowPrivate lifts: the ones a refusal names BILLING_WEBHOOK_ALLOW_PRIVATE for (domain/webhooks/endpoint-urls.ts).
  const locality: Array<[string, boolean]> = [
    ["http://example.com/hook", true],
    ["https://127.0.0.1/hook", true],
    ["https://10.0.0.5/hook", true],
    ["https://[::1]/hook", true],
    ["ftp://example.com/", false],
    ["https://user:pass@example.com/", false],
    ["http://user:pass@127.0.0.1/", false],
    ["https://example.com:0/", false],
    ["not a url", false],
  ];
  for (const [url, local] of locality) {
    it(`refuses ${url} as ${local ? "local (allowPrivate would accept it)" : "not local (allowPrivate would refuse it too)"}`, () => {
      const verdict = checkEndpointUrl(url, { allowPrivate: false });
      assert.equal(verdict.ok, false);
      if (!verdict.ok) assert.equal(verdict.local, local);
      assert.equal(checkEndpointUrl(url, { allowPrivate: true }).ok, local);
    });
  }

  const accepted: Array<{ name: string; url: string; allowPrivate?: boolean; href: string }> = [
    {
      name: "accepts an https URL with a domain name",
      url: "https://example.com/hooks/billing",
      href: "https://example.com/hooks/billing",
    },
    {
      name: "accepts an https URL with a port and query",
      url: "https://example.com:8443/h?x=1",
      href: "https://example.com:8443/h?x=1",
    },
    { name: "accepts port 65535", url: "https://example.com:65535/", href: "https://example.com:65535/" },
    { name: "accepts a public IPv4 literal", url: "https://93.184.216.34/hook", href: "https://93.184.216.34/hook" },
    {
      name: "accepts a public IPv6 literal",
      url: "https://[2606:2800:220:1::]/hook",
      href: "https://[2606:2800:220:1::]/hook",
    },
    {
      name: "accepts a public IPv4 written as one decimal number",
      url: "https://1572395042/",
      href: "https://93.184.216.34/",
    },
    {
      name: "accepts an IPv4-mapped public literal",
      url: "https://[::ffff:93.184.216.34]/",
      href: "https://[::ffff:5db8:d822]/",
    },
    {
      name: "accepts a URL exactly 2048 characters long",
      url: `https://example.com/${"a".repeat(2028)}`,
      href: `https://example.com/${"a".repeat(2028)}`,
    },
    {
      name: "leaves host names to the connect-time check",
      url: "https://localhost/hook",
      href: "https://localhost/hook",
    },
    {
      name: "accepts http:// when private targets are allowed",
      url: "http://example.com/hook",
      allowPrivate: true,
      href: "http://example.com/hook",
    },
    {
      name: "accepts a loopback literal when private targets are allowed",
      url: "http://127.0.0.1:3000/hook",
      allowPrivate: true,
      href: "http://127.0.0.1:3000/hook",
    },
    {
      name: "accepts an IPv6 loopback literal when private targets are allowed",
      url: "https://[::1]:3000/",
      allowPrivate: true,
      href: "https://[::1]:3000/",
    },
  ];
  for (const c of accepted) {
    it(c.name, () => {
      const verdict = checkEndpointUrl(c.url, { allowPrivate: c.allowPrivate ?? false });
      assert.ok(verdict.ok, verdict.ok ? "" : verdict.reason);
      if (verdict.ok) assert.equal(verdict.url.href, c.href);
    });
  }
});
