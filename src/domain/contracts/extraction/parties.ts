// Who the agreement is with: the parties it names under labels ("Customer: Acme Inc.", a CUSTOMER box with the
// name under it) or in running text ("between Acme Inc. (the "Customer") and …"), each with the role its label or
// defined term gives it, and an address when one is written with it. The customer is the party that is not the
// seller (the account's own names); its billing email is the one written near its name or role.
import { type Found, labelledValues, lineSource } from "./found-values.js";
import { type Block, flowsOf, type Layout, type Line, sentenceAt, sourceOf } from "./text-layout.js";
import { findEmails } from "./value-readers.js";

/** The customer as read: its name, and its address and billing email where the agreement gives them. */
export interface Customer {
  name: Found<string>;
  address: Found<string> | undefined;
  email: Found<string> | undefined;
}

/**
 * The customer: the party the agreement calls the customer, unless that is the seller; with no party in that
 * role, and only when the seller's names are known, the first named party that is not the seller. Its address
 * may come from another reading of the same name (a label and a sentence may both name it, one with an address).
 */
export function findCustomer(layout: Layout, sellerNames: readonly string[]): Customer | undefined {
  const parties = [...labelledParties(layout), ...partiesInProse(layout)];
  const sellers = [...sellerNames, ...parties.filter((p) => p.role === "seller").map((p) => p.name.value)];
  const customer =
    parties.find((p) => p.role === "customer" && !isSeller(p.name.value, sellerNames)) ??
    (sellerNames.length > 0
      ? parties.find((p) => p.role === undefined && !isSeller(p.name.value, sellers))
      : undefined);
  if (customer === undefined) return undefined;
  const address =
    customer.address ??
    parties.find((p) => p !== customer && p.name.value === customer.name.value && p.address)?.address;
  return { name: customer.name, address, email: customerEmail(layout, customer.name.value, sellers) };
}

const LEGAL_SUFFIX = String.raw`(?:Inc\.?|Incorporated|L\.?L\.?C\.?|Ltd\.?|Limited|GmbH|AG|S\.A\.S\.?|S\.A\.|SA|SAS|SARL|S\.à r\.l\.|B\.V\.|BV|N\.V\.|NV|Pty\.? Ltd\.?|P\.?L\.?C\.?|plc|Corp\.?|Corporation|LLP|L\.P\.|LP|Co\.|Oy|AB|ApS|A/S|S\.p\.A\.|S\.r\.l\.|K\.K\.|Pte\.? Ltd\.?|ULC|Group|Holdings)`;
const NAME_WITH_SUFFIX = new RegExp(
  String.raw`^((?:[A-Z0-9&][\p{L}0-9&'’.-]*,?\s+){0,7}?${LEGAL_SUFFIX})(?=$|[\s,;()])`,
  "u",
);

const ADDRESS_WORDS =
  /\b(?:Avenue|Ave|Street|St|Road|Rd|Suite|Floor|Building|Square|Boulevard|Blvd|Lane|Drive|Way|Plaza|Park|Box|Agreement|Schedule|Order Form)\b/i;
const CUSTOMER_ROLES = /^(?:Customer|Client|Buyer|Purchaser|Licensee|Subscriber|Merchant)$/i;
/** Defined terms that are not a party's name (the Agreement, the Effective Date …): not parties at all. */
const NOT_PARTIES =
  /^(?:Agreement|Effective Date|Services?|Fees|Order Form|Term|Schedule|Party|Parties|Confidential Information|Territory|Platform|Data|Documentation)$/i;
const SELLER_ROLES = /^(?:Provider|Service Provider|Supplier|Vendor|Seller|Licensor|Processor)$/i;

/** A party's name from the words that start with it: up to its legal suffix, or to the first comma or bracket. */
function partyName(text: string): { name: string; strength: number } | undefined {
  const t = text
    .replace(/^(?:\(\d+\)|\d+\.|[a-z]\))\s*/, "")
    .replace(/^(?:by and between|between|and|by)\s+/i, "")
    .replace(/^the\s+(?=[A-Z])/, "")
    .trim();
  const suffixed = NAME_WITH_SUFFIX.exec(t);
  if (suffixed) {
    // "Oakridge Dental Group Inc.": a second suffix after the first belongs to the name.
    const more =
      /^,?\s+(?:Inc\.?|Ltd\.?|LLC|L\.L\.C\.|Limited|Corp\.?|Corporation|plc|PLC|GmbH|AG|S\.A\.|SA|B\.V\.|N\.V\.|Pty\.? Ltd\.?|LLP)(?=$|[\s,;()])/.exec(
        t.slice(suffixed[1]!.length),
      );
    return { name: `${suffixed[1]!}${more?.[0] ?? ""}`.trim(), strength: 0.95 };
  }
  const plain =
    /^([A-Z][\p{L}0-9&'’.-]*(?:\s+(?:[A-Z0-9&][\p{L}0-9&'’.-]*|of|and|de|la|&)){0,5})(?=$|\s*[,;(]|\s+(?:a|an|with|having|whose|located|of)\s)/u.exec(
      t,
    );
  const name = plain?.[1]?.replace(/[.,]$/, "").trim();
  // No legal suffix: a name only if it does not read as part of an address or a heading.
  if (name !== undefined && name.length >= 3 && !ADDRESS_WORDS.test(name) && name !== name.toUpperCase())
    return { name, strength: 0.8 };
  return undefined;
}

const nameKey = (name: string): string[] =>
  name
    .toLowerCase()
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .replace(
      /\b(?:inc|incorporated|llc|ltd|limited|gmbh|ag|sa|sas|sarl|bv|nv|pty|plc|corp|corporation|llp|lp|co|company|oy|ab|aps|spa|srl|kk|pte|ulc|the)\b/g,
      " ",
    )
    .replace(/[^a-z0-9]+/g, " ")
    .trim()
    .split(" ")
    .filter((w) => w !== "");

/** Whether a name is the seller's: the same words, once legal suffixes and punctuation are set aside. */
function isSeller(name: string, sellers: readonly string[]): boolean {
  const key = nameKey(name).join(" ");
  if (key === "") return false;
  return sellers.some((seller) => {
    const s = nameKey(seller).join(" ");
    return s !== "" && (s === key || (s.length >= 6 && (key.startsWith(`${s} `) || s.startsWith(`${key} `))));
  });
}

/** An address in a party's description: after "at", "located at", "principal place of business at" … */
function addressIn(text: string): string | undefined {
  const m =
    /(?:place of business|principal office|registered (?:office|address)|offices?|address|located|domiciled|headquartered)(?:\s+(?:is|are))?\s*(?:at|in|:|(?=\s+\d))\s+(.+)/i.exec(
      text,
    ) ??
    /^\s*,\s*(?!(?:a|an|the|with|having|whose|located|registered|incorporated|acting|represented)\b)([\p{Lu}0-9][^()]*\d[^()]*)$/u.exec(
      text,
    );
  if (m === null) return undefined;
  const address = m[1]!
    .split(
      /\s*(?:\(|;|\s+and\s+its\b|,\s+(?:and|hereinafter|acting|represented|registered|company number|with company|(?:billing\s+|invoice\s+)?e-?mail|tel|telephone|phone|fax|attn|attention|vat|tax)\b|,?\s+[\w.+-]+@)/i,
    )[0]!
    .replace(/[,.\s]+$/, "")
    .trim();
  return /\d/.test(address) && address.length >= 8 && address.length <= 250 ? address : undefined;
}

interface Party {
  name: Found<string>;
  role: "customer" | "seller" | undefined;
  address?: Found<string>;
  block?: Block;
}

/** Where the sentence holding a party's defined term starts: after a full stop that ends no abbreviation. */
function partySentenceStart(text: string, at: number): number {
  let start = 0;
  for (const m of text.slice(0, at).matchAll(/[.;:](?=\s+[A-Z])/g)) {
    const before = text.slice(Math.max(0, (m.index ?? 0) - 6), (m.index ?? 0) + 1);
    if (/\b(?:Inc|Ltd|Co|Corp|Pty|N\.A|S\.A|L\.L\.C|No|St|Ave|Jr|Sr|Mr|Ms|Dr)\.$/.test(before)) continue;
    start = (m.index ?? 0) + 1;
  }
  return start;
}

const DEFINED_TERM =
  /\((?:the\s+|each\s+a\s+|hereinafter(?:\s+referred\s+to\s+as)?\s+|herein\s+)?(?:the\s+)?["“”'‘’]{1,2}([A-Z][A-Za-z ]{2,24})["“”'‘’]{1,2}\)/g;

/** Parties named in running text, each with the role its defined term gives it ("Customer", "Provider"). */
function partiesInProse(layout: Layout): Party[] {
  const parties: Party[] = [];
  for (const block of flowsOf(layout)) {
    let from = 0;
    const between = /\b(?:by and )?between\b/i.exec(block.text);
    if (between) from = between.index;
    for (const m of block.text.matchAll(DEFINED_TERM)) {
      const term = m[1]!.trim();
      const role = CUSTOMER_ROLES.test(term) ? "customer" : SELLER_ROLES.test(term) ? "seller" : undefined;
      if (role === undefined && NOT_PARTIES.test(term)) continue;
      // A party's words start after the previous party's defined term, "between", or the sentence's start.
      const start = Math.max(from, partySentenceStart(block.text, m.index ?? 0));
      const text = block.text.slice(start, m.index).replace(/^[\s,;]*(?:and\s+)?/, "");
      from = (m.index ?? 0) + m[0].length;
      const named = partyName(text);
      if (named === undefined) continue;
      const source = sourceOf(block, start, m.index ?? start);
      const party: Party = { name: { value: named.name, source, strength: named.strength }, role, block };
      const address = addressIn(text.slice(named.name.length));
      if (address !== undefined) party.address = { value: address, source, strength: 0.85 };
      else {
        // "… ("Customer"), with its principal place of business at …": the address after the defined term.
        const after = block.text.slice(from);
        const next = after.search(/\(["“'‘]|\band\s+[A-Z]|\.\s+[A-Z0-9]|\.$/);
        const tail = after.slice(0, next < 0 ? undefined : next);
        const later = /^\s*,?\s*(?:a|an|with|having|whose|located|of)\b/i.test(tail) ? addressIn(tail) : undefined;
        if (later !== undefined)
          party.address = { value: later, source: sourceOf(block, start, from + tail.length), strength: 0.8 };
      }
      parties.push(party);
    }
  }
  if (parties.length > 0) return parties;
  // No defined terms: "between A and B".
  for (const block of layout.blocks) {
    const m = /\bbetween\s+(.+?)\s+and\s+(?=[A-Z])(.+?)(?:\.\s|\.$|;|$)/.exec(block.text);
    if (m === null) continue;
    for (const [text, at] of [
      [m[1]!, m.index + m[0].indexOf(m[1]!)],
      [m[2]!, m.index + m[0].lastIndexOf(m[2]!)],
    ] as const) {
      const named = partyName(text);
      if (named === undefined) continue;
      const source = sourceOf(block, at, at + text.length);
      const party: Party = {
        name: { value: named.name, source, strength: named.strength - 0.05 },
        role: undefined,
        block,
      };
      const address = addressIn(text.slice(named.name.length));
      if (address !== undefined) party.address = { value: address, source, strength: 0.8 };
      parties.push(party);
    }
    if (parties.length > 0) break;
  }
  return parties;
}

const CUSTOMER_LABEL =
  /^(?:the\s+)?(?:customer|client|buyer|purchaser|licensee|subscriber|merchant|bill to|billed to|sold to)(?:\s+(?:name|legal name|entity|details|information|company))?$/i;
const SELLER_LABEL =
  /^(?:the\s+)?(?:provider|service provider|supplier|vendor|seller|licensor)(?:\s+(?:name|legal name|entity|details|information))?$/i;

/** Parties under labels: "Customer: Acme Inc.", a "CUSTOMER" box with the name under it. */
function labelledParties(layout: Layout): Party[] {
  const parties: Party[] = [];
  for (const [label, role] of [
    [CUSTOMER_LABEL, "customer"],
    [SELLER_LABEL, "seller"],
  ] as const) {
    for (const found of labelledValues(layout, label)) {
      // A label's whole value is the name when it is only a name: a few words, no address after a comma.
      const whole = found.value.trim();
      const bare = !/[,;:()@]/.test(whole) && whole.split(" ").length <= 6 && !ADDRESS_WORDS.test(whole);
      const named = bare && /^\p{Lu}/u.test(whole) ? { name: whole, strength: 0.9 } : partyName(found.value);
      if (named === undefined) continue;
      const party: Party = {
        name: { value: named.name, source: lineSource(...found.lines), strength: named.strength },
        role,
      };
      const rest = found.value.slice(found.value.indexOf(named.name) + named.name.length).replace(/^[\s,]+/, "");
      const inline =
        addressIn(found.value.slice(found.value.indexOf(named.name) + named.name.length)) ??
        (/\d/.test(rest) && rest.length >= 8 ? rest : undefined);
      if (inline !== undefined) party.address = { value: inline, source: lineSource(...found.lines), strength: 0.85 };
      else if (found.cell !== undefined) {
        // A box: the address is the lines under the name, up to an email, a phone or a label.
        const below = linesBelow(layout, found.cell).filter((_, k, all) => k < all.length);
        const lines: Array<{ text: string; line: Line }> = [];
        for (const entry of below) {
          if (
            /@|^(?:tel|phone|fax|attn|attention|email|e-mail|contact|vat|tax|reg)/i.test(entry.text) ||
            /:\s/.test(entry.text)
          )
            break;
          lines.push(entry);
        }
        const text = lines.map((l) => l.text.replace(/,$/, "")).join(", ");
        if (lines.length > 0 && /\d/.test(text))
          party.address = { value: text, source: lineSource(...lines.map((l) => l.line)), strength: 0.85 };
      }
      if (party.address === undefined) {
        const address = labelledAddress(layout, found.lines[0]!);
        if (address !== undefined) party.address = address;
      }
      parties.push(party);
    }
  }
  return parties;
}

const ADDRESS_LABEL =
  /^(?:address|billing address|registered address|registered office|principal office|business address|head office|postal address|mailing address)$/i;
const PARTY_LABEL = (text: string) => CUSTOMER_LABEL.test(text) || SELLER_LABEL.test(text);

/** The "Address:" line of a party's labelled block: after its name's line, before the next party's label. */
function labelledAddress(layout: Layout, nameLine: Line): Found<string> | undefined {
  const at = layout.lines.indexOf(nameLine);
  for (const found of labelledValues(layout, ADDRESS_LABEL)) {
    const k = layout.lines.indexOf(found.lines[0]!);
    if (k <= at || k > at + 6) continue;
    const between = layout.lines.slice(at + 1, k);
    if (between.some((line) => line.cells.some((cell) => PARTY_LABEL(cell.text.split(":")[0]!.trim())))) continue;
    if (!/\d/.test(found.value)) continue;
    return { value: found.value.replace(/[,.\s]+$/, ""), source: lineSource(...found.lines), strength: 0.9 };
  }
  return undefined;
}

/** The lines under a box's first line, in its column, until a gap or a label: an address's further lines. */
function linesBelow(layout: Layout, start: { line: number; x: number }, max = 4): Array<{ text: string; line: Line }> {
  const out: Array<{ text: string; line: Line }> = [];
  let previous = layout.lines[start.line]!;
  for (let at = start.line + 1; at < layout.lines.length && out.length < max; at++) {
    const line = layout.lines[at]!;
    if (line.page !== previous.page || previous.y - line.y > 2 * previous.size) break;
    const cell = line.cells.find((c) => Math.abs(c.x - start.x) <= 8);
    if (cell === undefined) break;
    out.push({ text: cell.text, line });
    previous = line;
  }
  return out;
}

/**
 * The customer's billing email: the one whose domain carries the customer's name, or whose sentence names the
 * customer or billing, best first; never one at the seller's domain or in a sentence about the seller.
 */
function customerEmail(layout: Layout, customer: string, sellers: readonly string[]): Found<string> | undefined {
  const tokens = (names: readonly string[]) => names.flatMap((n) => nameKey(n)).filter((w) => w.length >= 4);
  const customerTokens = tokens([customer]);
  const sellerTokens = tokens(sellers);
  const domainOf = (email: string) => (email.split("@")[1] ?? "").toLowerCase().replace(/[^a-z0-9]/g, "");
  let best: { score: number; found: Found<string> } | undefined;
  layout.blocks.forEach((block) => {
    for (const { email, index } of findEmails(block.text)) {
      const domain = domainOf(email);
      if (sellerTokens.some((t) => domain.includes(t))) continue;
      const around = sentenceAt(block.text, index).text;
      let score = 0;
      if (customerTokens.some((t) => domain.includes(t))) score += 2;
      if (/\b(?:billing|invoices?|accounts payable|AP|remittance|finance)\b/i.test(around)) score += 1;
      if (
        /\b(?:Customer|Client|Buyer|Licensee|Subscriber|Merchant)\b/.test(around) ||
        customerTokens.some((t) => around.toLowerCase().includes(t))
      )
        score += 1;
      if (sellers.some((s) => around.includes(s)) || /\b(?:Provider|Supplier|Vendor|Seller|Licensor)\b/.test(around))
        score -= 1;
      if (score <= 0) continue;
      if (best === undefined || score > best.score) {
        best = {
          score,
          found: {
            value: email,
            source: sourceOf(block, index, index + email.length),
            strength: score >= 3 ? 0.95 : 0.85,
          },
        };
      }
    }
  });
  return best?.found;
}
