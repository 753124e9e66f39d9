import { crc32, inflateSync } from "node:zlib";
import { TooLargeError, ValidationError } from "../kernel/errors.js";
import { MAX_LOGO_BYTES } from "./account-schemas.js";

/** The largest side a logo may be sent with, in pixels (a maximum: what is stored is smaller, LOGO_PIXELS). */
const MAX_SIDE = 4000;

/** The box a document prints the seller's logo in, at the top right, in points (about 2 by 0.8 inches). */
export const LOGO_BOX = { width: 150, height: 56 };

/**
 * The most pixels a stored logo has: 4 a point of LOGO_BOX (288 dpi, sharp on paper). A logo larger is scaled
 * down once, when it is uploaded (normalisedLogoSize), and documents embed that; a smaller one is kept as sent.
 */
const LOGO_PIXELS = { width: LOGO_BOX.width * 4, height: LOGO_BOX.height * 4 };

export interface LogoImage {
  contentType: "image/png" | "image/jpeg";
  width: number;
  height: number;
}

const refused = (why: string) =>
  new ValidationError(`The logo must be a PNG or JPEG image: ${why}`, "invalid_logo", [{ path: "logo", message: why }]);

/**
 * Reads a logo's bytes far enough to be sure every invoice PDF can draw it: a PNG whose chunks are whole and
 * whose pixels inflate to exactly their size, or a JPEG with a frame header, at most 1 MiB and 4000 pixels a
 * side. Anything else is refused here (400 `invalid_logo`, 413 `logo_too_large`), never when a PDF is made.
 */
export function inspectLogo(bytes: Uint8Array): LogoImage {
  if (bytes.length > MAX_LOGO_BYTES) {
    throw new TooLargeError(`The logo is over 1 MiB (${MAX_LOGO_BYTES} bytes)`, "logo_too_large");
  }
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  const image = isPng(buffer) ? inspectPng(buffer) : isJpeg(buffer) ? inspectJpeg(buffer) : undefined;
  if (!image) throw refused("the file is neither");
  if (image.width < 1 || image.height < 1 || image.width > MAX_SIDE || image.height > MAX_SIDE) {
    throw refused(`it is ${image.width}×${image.height} pixels; each side must be 1 to ${MAX_SIDE}`);
  }
  return image;
}

/** The size a logo of `width` × `height` pixels is stored at: within LOGO_PIXELS, its proportions kept, never upscaled. */
export function normalisedLogoSize(size: { width: number; height: number }): { width: number; height: number } {
  const scale = Math.min(1, LOGO_PIXELS.width / size.width, LOGO_PIXELS.height / size.height);
  if (scale === 1) return { width: size.width, height: size.height };
  return {
    width: Math.max(1, Math.round(size.width * scale)),
    height: Math.max(1, Math.round(size.height * scale)),
  };
}

/** Whether a logo of this size is stored as sent (it fits LOGO_PIXELS) rather than scaled down. */
export const fitsLogoPixels = (size: { width: number; height: number }): boolean =>
  size.width <= LOGO_PIXELS.width && size.height <= LOGO_PIXELS.height;

/**
 * A stored logo's size in pixels from its header alone (a PNG's IHDR, a JPEG's frame header), without reading
 * its pixels: what the account shows, and how a document knows a logo kept from before normalisation is large.
 * Undefined for bytes that are neither.
 */
export function storedLogoSize(bytes: Uint8Array): { width: number; height: number } | undefined {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  try {
    if (isPng(buffer) && buffer.length >= 24)
      return { width: buffer.readUInt32BE(16), height: buffer.readUInt32BE(20) };
    if (isJpeg(buffer)) {
      const { width, height } = inspectJpeg(buffer);
      return { width, height };
    }
  } catch {
    // Not an image this service stored.
  }
  return undefined;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const isPng = (b: Buffer) => b.length >= 8 && b.subarray(0, 8).equals(PNG_SIGNATURE);
const isJpeg = (b: Buffer) => b.length >= 4 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff;

/** Channels per PNG colour type (greyscale, RGB, palette, grey + alpha, RGBA). */
const PNG_CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };

function inspectPng(b: Buffer): LogoImage {
  let at = 8;
  let header: { width: number; height: number; depth: number; colour: number; interlace: number } | undefined;
  let palette = false;
  const data: Buffer[] = [];
  let ended = false;
  while (at + 12 <= b.length && !ended) {
    const length = b.readUInt32BE(at);
    const type = b.toString("latin1", at + 4, at + 8);
    const end = at + 12 + length;
    if (end > b.length) throw refused("the PNG is cut short");
    if (crc32(b.subarray(at + 4, at + 8 + length)) !== b.readUInt32BE(at + 8 + length)) {
      throw refused(`the PNG's ${JSON.stringify(type)} chunk is damaged (its checksum does not match)`);
    }
    const body = b.subarray(at + 8, at + 8 + length);
    if (header === undefined && type !== "IHDR") throw refused("the PNG does not start with its header");
    if (type === "IHDR") {
      if (length !== 13) throw refused("the PNG's header is malformed");
      header = {
        width: body.readUInt32BE(0),
        height: body.readUInt32BE(4),
        depth: body[8]!,
        colour: body[9]!,
        interlace: body[12]!,
      };
    } else if (type === "PLTE") palette = true;
    else if (type === "IDAT") data.push(body);
    else if (type === "IEND") ended = true;
    at = end;
  }
  if (!header || !ended || data.length === 0) throw refused("the PNG is incomplete");
  const channels = PNG_CHANNELS[header.colour];
  if (channels === undefined || header.depth !== 8) {
    throw refused("only 8-bit greyscale, RGB, palette and alpha PNGs are printed");
  }
  if (header.interlace !== 0) throw refused("interlaced PNGs are not printed; save it without interlacing");
  if (header.colour === 3 && !palette) throw refused("the palette PNG has no palette");
  if (header.width > MAX_SIDE || header.height > MAX_SIDE) {
    return { contentType: "image/png", width: header.width, height: header.height };
  }
  const expected = header.height * (1 + header.width * channels);
  let pixels: Buffer;
  try {
    pixels = inflateSync(Buffer.concat(data), { maxOutputLength: expected + 1 });
  } catch {
    throw refused("the PNG's pixels do not decompress");
  }
  if (pixels.length !== expected) throw refused("the PNG's pixels do not match its size");
  // Each row starts with its filter type, 0 to 4: a PDF writer decoding the pixels throws on any other.
  const stride = 1 + header.width * channels;
  for (let row = 0; row < header.height; row += 1) {
    if (pixels[row * stride]! > 4) throw refused(`the PNG's row ${row + 1} has an unknown filter type`);
  }
  return { contentType: "image/png", width: header.width, height: header.height };
}

/** Start-of-frame markers (baseline, extended, progressive, lossless, in Huffman or arithmetic coding). */
const SOF = new Set([0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf]);

function inspectJpeg(b: Buffer): LogoImage {
  let at = 2;
  while (at + 4 <= b.length) {
    if (b[at] !== 0xff) throw refused("the JPEG's markers are damaged");
    const marker = b[at + 1]!;
    if (marker === 0xff) {
      at += 1;
      continue;
    }
    const length = b.readUInt16BE(at + 2);
    if (length < 2 || at + 2 + length > b.length) throw refused("the JPEG is cut short");
    if (SOF.has(marker)) {
      if (length < 8) throw refused("the JPEG's frame header is malformed");
      const channels = b[at + 9];
      if (channels !== 1 && channels !== 3 && channels !== 4) throw refused("the JPEG's colour space is not printed");
      return { contentType: "image/jpeg", height: b.readUInt16BE(at + 5), width: b.readUInt16BE(at + 7) };
    }
    if (marker === 0xda || marker === 0xd9) break; // scan data or the end before any frame header
    at += 2 + length;
  }
  throw refused("the JPEG has no frame header");
}
