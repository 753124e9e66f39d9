// A logo made small once (docs/api.md, "Account", the logo): decoded with @napi-rs/canvas, scaled down to what
// an invoice's logo box needs (normalisedLogoSize), and encoded again, PNG as PNG (its transparency kept), JPEG
// as JPEG. Runs in the document processes (documents/document-child.ts), never on the service's main thread:
// decoding a 4000 × 4000 image takes a core for a while.
import { createCanvas, loadImage } from "@napi-rs/canvas";
import { DomainError, type ErrorDetail } from "../kernel/errors.js";
import { fitsLogoPixels, inspectLogo, normalisedLogoSize } from "./logo-image.js";

export type NormalisedLogo =
  /** `bytes` unset: the logo fits as it is and is kept as sent. */
  | { kind: "logo"; contentType: "image/png" | "image/jpeg"; bytes?: Uint8Array; width: number; height: number }
  /** What inspectLogo refused, as plain data (a class does not cross to the service's process). */
  | { kind: "refused"; code: string; message: string; details?: ErrorDetail[] };

/** JPEG quality of a scaled-down JPEG logo. */
const JPEG_QUALITY = 90;

/** The logo as it is stored and printed: checked whole (inspectLogo), then scaled down if it is larger than it needs. */
export async function normaliseLogo(bytes: Uint8Array): Promise<NormalisedLogo> {
  let image: ReturnType<typeof inspectLogo>;
  try {
    image = inspectLogo(bytes);
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    return {
      kind: "refused",
      code: error.code,
      message: error.message,
      ...(error.details ? { details: error.details } : {}),
    };
  }
  if (fitsLogoPixels(image)) return { kind: "logo", contentType: image.contentType, ...sizeOf(image) };
  const decoded = await loadImage(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length));
  const size = normalisedLogoSize(image);
  const canvas = createCanvas(size.width, size.height);
  const context = canvas.getContext("2d");
  context.imageSmoothingEnabled = true;
  context.imageSmoothingQuality = "high";
  context.drawImage(decoded, 0, 0, size.width, size.height);
  const encoded =
    image.contentType === "image/png" ? await canvas.encode("png") : await canvas.encode("jpeg", JPEG_QUALITY);
  return { kind: "logo", contentType: image.contentType, bytes: new Uint8Array(encoded), ...size };
}

const sizeOf = ({ width, height }: { width: number; height: number }) => ({ width, height });
