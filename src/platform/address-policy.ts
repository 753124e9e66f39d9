import ipaddr from "ipaddr.js";

/**
 * Which webhook endpoint URLs and which addresses we are willing to send to (docs/webhooks.md). Pure: no
 * DNS here. `checkEndpointUrl` is the syntax check made when an endpoint is created or changed; the
 * delivery client (outbound-http.ts) resolves the host and runs `isPublicAddress` on every address at
 * connect time. It lives in platform/ because that client needs it and platform never imports the domain.
 */

/**
 * A refusal is `local` when allowPrivate would have accepted the URL (http://, or an IP literal that is not
 * public): the refusals a developer pointing the service at a receiver on their own machine meets.
 */
export type UrlVerdict = { ok: true; url: URL } | { ok: false; reason: string; local: boolean };

const MAX_URL_LENGTH = 2048;

/**
 * Syntax and scheme: https:// only (http:// allowed only when allowPrivate), no credentials in the URL,
 * a host, port 1..65535, at most 2048 chars. An IP-literal host is checked with isPublicAddress unless
 * allowPrivate.
 */
export function checkEndpointUrl(text: string, options: { allowPrivate: boolean }): UrlVerdict {
  // A refusal that stands with allowPrivate too is said first, and is not local (credentials in an http:// URL).
  const lenient = checkUrl(text, true);
  if (!lenient.ok || options.allowPrivate) return lenient;
  const strict = checkUrl(text, false);
  return strict.ok ? strict : { ...strict, local: true };
}

function checkUrl(text: string, allowPrivate: boolean): UrlVerdict {
  if (typeof text !== "string" || text.length === 0) return refuse("URL is empty");
  if (text.length > MAX_URL_LENGTH) return refuse(`URL is longer than ${MAX_URL_LENGTH} characters`);
  // The WHATWG parser silently drops tabs and newlines anywhere and trims spaces and controls at the ends,
  // so what we would store and what a reader sees could differ: refuse them instead.
  if (/[\u0000-\u0020\u007f]/.test(text)) return refuse("URL contains whitespace or control characters");

  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return refuse("not a valid URL");
  }

  if (url.protocol === "http:") {
    if (!allowPrivate) return refuse("URL must use https://");
  } else if (url.protocol !== "https:") {
    return refuse("URL must use https://");
  }
  if (url.username !== "" || url.password !== "") return refuse("URL must not contain credentials");
  if (url.hostname === "") return refuse("URL has no host");
  if (url.port !== "") {
    const port = Number(url.port);
    if (!Number.isInteger(port) || port < 1 || port > 65535) return refuse("port must be between 1 and 65535");
  }
  if (url.href.length > MAX_URL_LENGTH) return refuse(`URL is longer than ${MAX_URL_LENGTH} characters`);

  // The WHATWG parser has already turned every IPv4 spelling (2130706433, 0x7f.1, 0177.0.0.1, 127.1,
  // percent-encoded digits, a trailing dot) into dotted decimal, and IPv6 literals into bracketed hex.
  const literal = ipLiteralOf(url.hostname);
  if (literal !== null && !allowPrivate && !isPublicAddress(literal)) {
    return refuse(`address ${literal} is not public`);
  }
  return { ok: true, url };
}

function refuse(reason: string): UrlVerdict {
  return { ok: false, reason, local: false };
}

/** The address text when a WHATWG `url.hostname` is an IP literal, else null. */
function ipLiteralOf(hostname: string): string | null {
  if (hostname.startsWith("[") && hostname.endsWith("]")) return hostname.slice(1, -1);
  if (ipaddr.IPv4.isValid(hostname)) return hostname;
  return null;
}

// Named for clarity; each is also inside a range refused below (169.254/16, fc00::/7, 100.64/10).
const METADATA_ADDRESSES = ["169.254.169.254", "fd00:ec2::254", "100.100.100.200"].map((text) => ipaddr.parse(text));

/**
 * Whether an IP address (v4 or v6 text) is public: false for loopback, private (10/8, 172.16/12,
 * 192.168/16), link-local (169.254/16, fe80::/10), CGNAT (100.64/10), multicast, unspecified (0.0.0.0, ::),
 * broadcast, reserved/benchmarking/documentation ranges (192.0.2/24, 198.18/15, 198.51.100/24,
 * 203.0.113/24, 240/4, 0/8, 192.0.0/24), metadata addresses (169.254.169.254, fd00:ec2::254,
 * 100.100.100.200), unique-local fc00::/7, site-local fec0::/10, IPv4-mapped (::ffff:a.b.c.d),
 * IPv4-compatible, NAT64 (64:ff9b::/96) and 6to4 (2002::/16) / Teredo (2001::/32) forms whose embedded IPv4
 * is not public, and anything ipaddr.js cannot parse.
 *
 * Stricter than that list in a few places, always towards "not public": IPv4 must be plain dotted decimal
 * (the shorthand and octal/hex spellings are ambiguous between parsers), IPv6 must not carry a zone id,
 * every special-purpose range ipaddr.js names is refused (e.g. AS112, AMT, 2001:db8::/32, 100::/64), and
 * native IPv6 must be global unicast (2000::/3).
 */
export function isPublicAddress(address: string): boolean {
  if (typeof address !== "string") return false;
  if (ipaddr.IPv4.isValidFourPartDecimal(address)) return isPublicIPv4(ipaddr.IPv4.parse(address));
  const v6 = parseIPv6(address);
  return v6 !== null && isPublicIPv6(v6);
}

function isPublicIPv4(address: ipaddr.IPv4): boolean {
  if (METADATA_ADDRESSES.some((m) => m.kind() === "ipv4" && address.match(m, 32))) return false;
  // ipaddr.js names 0/8, loopback, private, link-local, CGNAT, multicast, broadcast, 192.0.0/24, 192.0.2/24,
  // 192.88.99/24, 198.18/15, 198.51.100/24, 203.0.113/24, 240/4, AS112 and AMT; everything else is "unicast".
  return address.range() === "unicast";
}

/** Parses IPv6 text; a dotted-quad tail must be plain decimal (ipaddr.js alone reads "::a.b.c.d" as mapped). */
function parseIPv6(text: string): ipaddr.IPv6 | null {
  if (text.includes("%")) return null; // zone ids only make sense on link-local addresses
  let hex = text;
  const lastColon = text.lastIndexOf(":");
  if (lastColon >= 0 && text.includes(".", lastColon)) {
    const tail = text.slice(lastColon + 1);
    if (!ipaddr.IPv4.isValidFourPartDecimal(tail)) return null;
    const [a, b, c, d] = ipaddr.IPv4.parse(tail).octets as [number, number, number, number];
    hex = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  if (!ipaddr.IPv6.isValid(hex)) return null;
  try {
    return ipaddr.IPv6.parse(hex);
  } catch {
    return null;
  }
}

function isPublicIPv6(address: ipaddr.IPv6): boolean {
  if (METADATA_ADDRESSES.some((m) => m.kind() === "ipv6" && address.match(m, 128))) return false;
  const p = address.parts;
  const v4 = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  const part = (i: number) => p[i] ?? 0;
  const zeros = (from: number, to: number) => p.slice(from, to).every((x) => x === 0);

  if (zeros(0, 8)) return false; // ::
  if (zeros(0, 7) && part(7) === 1) return false; // ::1
  // IPv4-mapped ::ffff:a.b.c.d and IPv4-translated ::ffff:0:a.b.c.d: the packet goes to the IPv4 address.
  if (zeros(0, 5) && part(5) === 0xffff) return isPublicIPv4(v4(part(6), part(7)));
  if (zeros(0, 4) && part(4) === 0xffff && part(5) === 0) return isPublicIPv4(v4(part(6), part(7)));
  // IPv4-compatible ::a.b.c.d (deprecated, RFC 4291): never a real destination, and outside 2000::/3.
  if (zeros(0, 6)) return false;
  // NAT64 well-known prefix 64:ff9b::/96 (RFC 6052): reaches the embedded IPv4 address.
  if (part(0) === 0x64 && part(1) === 0xff9b && zeros(2, 6)) return isPublicIPv4(v4(part(6), part(7)));
  // 6to4 2002:AABB:CCDD::/48 (RFC 3056): tunnels to the IPv4 address in bits 16..47.
  if (part(0) === 0x2002) return isPublicIPv4(v4(part(1), part(2)));
  // Teredo 2001:0:SSSS:SSSS:flags:port:CCCC:CCCC (RFC 4380): server IPv4, and the client's IPv4 inverted.
  if (part(0) === 0x2001 && part(1) === 0) {
    return isPublicIPv4(v4(part(2), part(3))) && isPublicIPv4(v4(~part(6) & 0xffff, ~part(7) & 0xffff));
  }
  const range: string = address.range();
  return range === "unicast" && isGlobalUnicast(address);
}

/** 2000::/3, the only block IANA allocates for global unicast. */
function isGlobalUnicast(address: ipaddr.IPv6): boolean {
  return ((address.parts[0] ?? 0) & 0xe000) === 0x2000;
}
