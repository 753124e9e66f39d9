import ipaddr from "ipaddr.js";

/**
 * Which TCP peers may tell us who the client is (BILLING_TRUSTED_PROXIES). Behind a load balancer every
 * connection comes from the balancer, so the failure throttle, the per-address rate limits and the logs would
 * all see one address. A peer listed here is a proxy we trust: its `X-Forwarded-For` is read from the right,
 * skipping every trusted proxy, and the first address that is not one is the client (a client can write any
 * X-Forwarded-For it likes, but only the entries our own proxies appended after it are believed). A peer not
 * listed is the client itself, and its X-Forwarded-For is ignored. Fastify applies this (`trustProxy`) and
 * gives the result as `request.ip`; http-app.ts hands the same address to the MCP surface.
 */

/** A range of addresses as `address/prefix`, IPv4 or IPv6. */
type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

function parseEntry(entry: string): Range {
  const [address = "", prefix, ...rest] = entry.split("/");
  // Plain dotted decimal only: ipaddr.js also reads "10.1" or "0x0a.1", which a reader of the setting would not.
  const valid = ipaddr.IPv4.isValidFourPartDecimal(address) || (ipaddr.IPv6.isValid(address) && !address.includes("%"));
  const parsed = valid ? ipaddr.parse(address) : undefined;
  const bits = parsed?.kind() === "ipv4" ? 32 : 128;
  const length = prefix === undefined ? bits : /^\d{1,3}$/.test(prefix) ? Number(prefix) : NaN;
  if (!parsed || rest.length > 0 || !(length >= 0 && length <= bits)) {
    throw new Error(`'${entry}' is not an IP address or a CIDR range (such as 10.0.0.7, 10.0.0.0/8 or fd00::/8)`);
  }
  return [parsed, length];
}

/**
 * BILLING_TRUSTED_PROXIES: IP addresses and CIDR ranges separated by commas, as `address/prefix` texts
 * (`10.0.0.7` → `10.0.0.7/32`). Empty: trust no proxy. Throws an Error saying which entry is wrong.
 */
export function parseTrustedProxies(text: string): string[] {
  return text
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "")
    .map((entry) => {
      const [address, prefix] = parseEntry(entry);
      return `${address.toString()}/${prefix}`;
    });
}

/**
 * Whether an address belongs to one of the trusted ranges (from parseTrustedProxies). An IPv4 peer that the
 * socket reports IPv4-mapped (::ffff:10.0.0.7, on a dual-stack listener) matches the IPv4 ranges. Anything
 * that is not an address is not trusted.
 */
export function trustedProxyCheck(ranges: readonly string[]): (address: string) => boolean {
  const parsed = ranges.map(parseEntry);
  return (address) => {
    let ip: ipaddr.IPv4 | ipaddr.IPv6;
    try {
      ip = ipaddr.process(address);
    } catch {
      return false;
    }
    return parsed.some(([range, prefix]) => range.kind() === ip.kind() && ip.match(range, prefix));
  };
}
