// multipart/form-data for the routes that take a file (a contract upload: the API's and the dashboard's).
// busboy reads the stream; every field arrives as its text, whatever type its part declares, so a JSON part
// is parsed by the caller exactly (exact-json.ts), never through a double. Limits are enforced while reading:
// a file over its limit stops being buffered at the limit.
import type { FastifyInstance, FastifyRequest } from "fastify";
import { Busboy, type BusboyHeaders, type BusboyInstance } from "@fastify/busboy";
import type { UploadedFile } from "../../domain/contracts/agreement-upload.js";
import { MAX_AGREEMENT_BYTES } from "../../domain/contracts/contract-schemas.js";
import { DomainError, TooLargeError, UnsupportedContentError, ValidationError } from "../../domain/kernel/errors.js";
import { unstorableTextError } from "../../domain/kernel/storable-text.js";

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
  if (!String(request.headers["content-type"] ?? "").toLowerCase().startsWith("multipart/form-data")) {
    return Promise.reject(new UnsupportedContentError(`Send the form as multipart/form-data, with the file in the part \`${limits.fileField}\``, "unsupported_media_type"));
  }
  return new Promise((resolve, reject) => {
    let busboy: BusboyInstance;
    try {
      busboy = new Busboy({
        headers: request.headers as BusboyHeaders,
        // Parts: room for one file part too many, so that a second file is counted as a file (too_many_files)
        // whatever the order of the parts, not as a part too many; every part past that is a field or a file
        // too many already. busboy counts parts before it counts files.
        limits: { fileSize: limits.maxFileBytes, files: 1, fields: limits.maxFields, parts: limits.maxFields + 2, fieldSize: limits.maxFieldBytes },
        // A named text part stays text even when sent as a file; any other part with a file name is a file.
        isPartAFile: (name, contentType, fileName) =>
          !(limits.textParts ?? []).includes(name ?? "") && (fileName !== undefined || contentType === "application/octet-stream"),
      });
    } catch (error) {
      reject(new ValidationError(`The multipart body cannot be read: ${(error as Error).message}`, "invalid_multipart"));
      return;
    }
    const fields = new URLSearchParams();
    let file: UploadedFile | undefined;
    let failure: DomainError | undefined;
    // A file under another name is refused once the form is read: were a second file to follow, the form is
    // refused for that (too_many_files), as it is when the file under the right name comes first.
    let misplacedFile: string | undefined;
    let fileDone: Promise<void> = Promise.resolve();
    let settled = false;
    const fail = (error: DomainError) => {
      failure ??= error;
    };
    const finish = () => {
      if (settled) return;
      settled = true;
      if (misplacedFile !== undefined) {
        fail(new ValidationError(`Unexpected file in the part \`${misplacedFile}\`: send the file as \`${limits.fileField}\``, "unexpected_file"));
      }
      if (failure) {
        // The form is refused: what is left of the body is read and dropped, not parsed.
        request.raw.unpipe(busboy);
        request.raw.resume();
        return reject(failure);
      }
      void fileDone.then(() => {
        if (failure) return reject(failure);
        const refusal = unstorableTextError([...fields].flat());
        if (refusal) return reject(refusal);
        resolve({ fields, file });
      });
    };

    busboy.on("field", (name: string, value: string, _nameTruncated: boolean, valueTruncated: boolean) => {
      if (valueTruncated) fail(new TooLargeError(`The field \`${name}\` is longer than ${limits.maxFieldBytes} bytes`, "field_too_large"));
      else fields.append(name, value);
    });
    busboy.on("file", (name: string, stream: NodeJS.ReadableStream & { truncated?: boolean }, filename: string) => {
      if (name !== limits.fileField) {
        misplacedFile = name;
        stream.resume();
        return;
      }
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
      const chunks: Buffer[] = [];
      fileDone = new Promise((done) => {
        stream.on("data", (chunk: Buffer) => {
          if (!failure) chunks.push(chunk);
        });
        stream.on("limit", () => fail(new TooLargeError(`The file is larger than ${limits.maxFileWords}`, "file_too_large")));
        stream.on("end", () => {
          if (!failure) file = { filename, bytes: Buffer.concat(chunks) };
          done();
        });
        stream.on("error", () => done());
      });
    });
    // A count over its limit refuses the form at once. busboy skips the parts past a limit, and never finishes a
    // skipped part larger than its buffer (@fastify/busboy 3.2.6): waiting for its `finish` left the request
    // unanswered (a second PDF, say) until the request timeout.
    const refuse = (error: DomainError) => {
      fail(error);
      finish();
    };
    busboy.on("filesLimit", () => refuse(new TooLargeError(`Send one file, in the part \`${limits.fileField}\``, "too_many_files")));
    busboy.on("fieldsLimit", () => refuse(new TooLargeError(`The form has more than ${limits.maxFields} fields`, "too_many_fields")));
    busboy.on("partsLimit", () => refuse(new TooLargeError(`The form has more than ${limits.maxFields + 2} parts`, "too_many_fields")));
    busboy.on("error", (error: unknown) => {
      fail(new ValidationError(`The multipart body is malformed: ${(error as Error)?.message ?? "unreadable"}`, "invalid_multipart"));
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
