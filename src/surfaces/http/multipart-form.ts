// multipart/form-data for the routes that take a file (a contract upload: the API's and the dashboard's).
// busboy reads the stream; every field arrives as its text (strict UTF-8, whatever type or charset its part
// declares), so a JSON part is parsed by the caller exactly (exact-json.ts), never through a double. Limits are enforced while reading:
// a file over its limit stops being buffered at the limit.
import type { FastifyInstance, FastifyRequest } from "fastify";
import { Busboy, type BusboyHeaders, type BusboyInstance } from "@fastify/busboy";
import type { UploadedFile } from "../../domain/contracts/agreement-upload.js";
import { MAX_AGREEMENT_BYTES } from "../../domain/contracts/contract-schemas.js";
import { DomainError, TooLargeError, UnsupportedContentError, ValidationError } from "../../domain/kernel/errors.js";
import { decodeUtf8, unstorableTextError } from "../../domain/kernel/storable-text.js";

export interface MultipartForm {
  /** Every text field, in the order sent. */
  fields: URLSearchParams;
  /** The one file, under `fileField`; undefined when none was sent (or it was empty and unnamed). */
  file: UploadedFile | undefined;
}

export interface MultipartLimits {
  /** The part that carries the file; a file under any other name is refused. */
  fileField: string;
  maxFileBytes: number;
  /** Words for a file over the limit ("10 MB"). */
  maxFileWords: string;
  maxFieldBytes: number;
  maxFields: number;
  /** Parts read as text fields even when sent as files (`curl -F terms=@terms.json`), at most maxFieldBytes each. */
  textParts?: readonly string[];
  /** Called with the fields read so far when the file starts: a form's CSRF token is checked before its file is read. */
  beforeFile?: (fields: URLSearchParams) => void;
}

/** A contract upload: the agreement in `file` (10 MiB at most), its terms in a text field (1 MiB at most). */
export const UPLOAD_LIMITS: MultipartLimits = {
  fileField: "file",
  maxFileBytes: MAX_AGREEMENT_BYTES,
  maxFileWords: "10 MiB (10,485,760 bytes)",
  maxFieldBytes: 1024 * 1024,
  // `terms` only: every field is held in memory until the request is read.
  maxFields: 1,
  textParts: ["terms"],
};

/** Leaves a multipart body unread for readMultipartForm; registered only where a route reads one. */
export function acceptMultipart(app: FastifyInstance): void {
  app.addContentTypeParser("multipart/form-data", (_request, _payload, done) => done(null, undefined));
}

export function readMultipartForm(request: FastifyRequest, limits: MultipartLimits): Promise<MultipartForm> {
  if (
    !String(request.headers["content-type"] ?? "")
      .toLowerCase()
      .startsWith("multipart/form-data")
  ) {
    return Promise.reject(
      new UnsupportedContentError(
        `Send the form as multipart/form-data, with the file in the part \`${limits.fileField}\``,
        "unsupported_media_type",
      ),
    );
  }
  return new Promise((resolve, reject) => {
    let busboy: BusboyInstance;
    try {
      busboy = new Busboy({
        headers: request.headers as BusboyHeaders,
        // Every part reaches us as a stream of its bytes, text fields too: busboy would decode a field as
        // UTF-8 leniently (U+FFFD for bytes that are not), and its charset parameter would choose the
        // decoder. Fields are decoded strictly below (storable-text.ts), and the counts are kept here; busboy's
        // own limits sit one part above them, as a backstop.
        isPartAFile: () => true,
        limits: {
          // One byte past the larger limit: enough for readPart to see a part go over its own.
          fileSize: Math.max(limits.maxFileBytes, limits.maxFieldBytes) + 1,
          files: limits.maxFields + 2,
          fields: 0,
          parts: limits.maxFields + 2,
        },
      });
    } catch (error) {
      reject(
        new ValidationError(`The multipart body cannot be read: ${(error as Error).message}`, "invalid_multipart"),
      );
      return;
    }
    const fields = new URLSearchParams();
    let file: UploadedFile | undefined;
    let files = 0;
    let textFields = 0;
    let failure: DomainError | undefined;
    const partsDone: Promise<unknown>[] = [];
    // A file under another name is refused once the form is read: were a second file to follow, the form is
    // refused for that (too_many_files), as it is when the file under the right name comes first.
    let misplacedFile: string | undefined;
    let settled = false;
    const fail = (error: DomainError) => {
      failure ??= error;
    };
    const finish = () => {
      if (settled) return;
      settled = true;
      if (failure) {
        // The form is refused: what is left of the body is read and dropped, not parsed.
        request.raw.unpipe(busboy);
        request.raw.resume();
        return reject(failure);
      }
      void Promise.all(partsDone).then(() => {
        if (failure) return reject(failure);
        if (misplacedFile !== undefined) {
          return reject(
            new ValidationError(
              `Unexpected file in the part \`${misplacedFile}\`: send the file as \`${limits.fileField}\``,
              "unexpected_file",
            ),
          );
        }
        const refusal = unstorableTextError([...fields].flat());
        if (refusal) return reject(refusal);
        resolve({ fields, file });
      });
    };
    // The bytes of a part, up to `max` (past it, `onLimit` and nothing more is kept), handed to `onEnd` as the
    // part ends: at once, so that a field is in `fields` before the next part starts (a form's CSRF token is
    // checked as its file begins).
    const readPart = (
      stream: NodeJS.ReadableStream,
      max: number,
      onLimit: () => void,
      onEnd: (bytes: Buffer) => void,
    ) =>
      new Promise<void>((done) => {
        const chunks: Buffer[] = [];
        let size = 0;
        stream.on("data", (chunk: Buffer) => {
          if (failure) return;
          size += chunk.length;
          if (size > max) onLimit();
          else chunks.push(chunk);
        });
        stream.on("end", () => {
          if (!failure) onEnd(Buffer.concat(chunks));
          done();
        });
        stream.on("error", () => done());
      });

    busboy.on(
      "file",
      (
        name: string,
        stream: NodeJS.ReadableStream,
        filename: string | undefined,
        _encoding: string,
        mimeType: string,
      ) => {
        // A named text part stays text even when sent as a file; any other part with a file name is a file.
        const isFile =
          !(limits.textParts ?? []).includes(name) &&
          (filename !== undefined || mimeType === "application/octet-stream");
        if (failure) {
          stream.resume();
          return;
        }
        if (!isFile) {
          if (++textFields > limits.maxFields) {
            stream.resume();
            return refuse(new TooLargeError(`The form has more than ${limits.maxFields} fields`, "too_many_fields"));
          }
          const tooLarge = () =>
            fail(
              new TooLargeError(
                `The field \`${name}\` is longer than ${limits.maxFieldBytes} bytes`,
                "field_too_large",
              ),
            );
          partsDone.push(
            readPart(stream, limits.maxFieldBytes, tooLarge, (bytes) => {
              try {
                fields.append(name, decodeUtf8(bytes, `The field \`${name}\``));
              } catch (error) {
                fail(error as DomainError);
              }
            }),
          );
          return;
        }
        // Every file part counts, whatever its name: a second one is too_many_files in any order of the parts.
        if (++files > 1) {
          stream.resume();
          return refuse(new TooLargeError(`Send one file, in the part \`${limits.fileField}\``, "too_many_files"));
        }
        if (name !== limits.fileField) {
          misplacedFile = name;
          stream.resume();
          return;
        }
        // The fields before the file are complete once their parts have ended (a part's end is told after the
        // next part starts): the file waits for them, unread, then the form's check runs before it is read.
        const fieldsRead = Promise.all(partsDone);
        partsDone.push(
          fieldsRead.then(() => {
            try {
              limits.beforeFile?.(fields);
            } catch (error) {
              if (!(error instanceof DomainError)) throw error;
              fail(error);
            }
            if (failure) {
              stream.resume();
              return;
            }
            const tooLarge = () =>
              fail(new TooLargeError(`The file is larger than ${limits.maxFileWords}`, "file_too_large"));
            return readPart(stream, limits.maxFileBytes, tooLarge, (bytes) => {
              file = { filename: filename ?? "", bytes };
            });
          }),
        );
      },
    );
    // A count over its limit refuses the form at once. busboy skips the parts past a limit, and never finishes a
    // skipped part larger than its buffer (@fastify/busboy 3.2.6): waiting for its `finish` left the request
    // unanswered (a second PDF, say) until the request timeout.
    const refuse = (error: DomainError) => {
      fail(error);
      finish();
    };
    busboy.on("filesLimit", () =>
      refuse(new TooLargeError(`The form has more than ${limits.maxFields + 1} parts`, "too_many_fields")),
    );
    busboy.on("partsLimit", () =>
      refuse(new TooLargeError(`The form has more than ${limits.maxFields + 1} parts`, "too_many_fields")),
    );
    busboy.on("error", (error: unknown) => {
      fail(
        new ValidationError(
          `The multipart body is malformed: ${(error as Error)?.message ?? "unreadable"}`,
          "invalid_multipart",
        ),
      );
      finish();
    });
    busboy.on("finish", finish);
    request.raw.on("error", () => {
      fail(new ValidationError("The request ended before its multipart body", "invalid_multipart"));
      finish();
    });
    request.raw.pipe(busboy);
  });
}
