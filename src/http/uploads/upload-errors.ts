/**
 * The errors of multipart uploads, in the catalogue's types and codes: a file or form over its limit
 * (413, naming the limit and the setting that raises it), a body that is not multipart (415, naming the
 * content type received), a malformed or unexpected form (400, naming the field when there is one), the
 * process's spool budget spent by other uploads (503, naming its setting), and our own disk failing (500).
 */
import { ErrorCode, ErrorType, errors } from '../../lib/error-catalogue.ts';
import { GatewayError } from '../../lib/gateway-error.ts';

export const uploadErrors = {
  fileTooLarge(field: string, limitBytes: number, setting: string): GatewayError {
    return new GatewayError({
      status: 413,
      type: ErrorType.invalidRequest,
      code: ErrorCode.bodyTooLarge,
      param: field,
      message: `The uploaded ${field} exceeds ${limitBytes} bytes (${formatBytes(limitBytes)}), the limit of this endpoint. Send a smaller file or raise ${setting}.`,
    });
  },
  bodyTooLarge(announcedBytes: number, limitBytes: number, setting: string): GatewayError {
    return new GatewayError({
      status: 413,
      type: ErrorType.invalidRequest,
      code: ErrorCode.bodyTooLarge,
      message: `The request body announces ${announcedBytes} bytes, more than an upload of ${limitBytes} bytes (${formatBytes(limitBytes)}) and its form fields can take. Send a smaller file or raise ${setting}.`,
      // The rest of an announced body is not read: the connection cannot be reused.
      headers: { connection: 'close' },
    });
  },
  formTooLarge(what: string, limit: number): GatewayError {
    return new GatewayError({
      status: 413,
      type: ErrorType.invalidRequest,
      code: ErrorCode.bodyTooLarge,
      message: `The multipart form has more than ${limit} ${what}, the limit. Send only the fields the endpoint documents.`,
    });
  },
  fieldTooLong(field: string, limitBytes: number): GatewayError {
    return new GatewayError({
      status: 413,
      type: ErrorType.invalidRequest,
      code: ErrorCode.bodyTooLarge,
      param: field,
      message: `The form field ${field} is longer than ${limitBytes} bytes, the limit of a text field.`,
    });
  },
  notMultipart(contentType: string, endpoint: string): GatewayError {
    return new GatewayError({
      status: 415,
      type: ErrorType.invalidRequest,
      code: ErrorCode.unsupportedMediaType,
      message: `Content-Type ${contentType} is not supported by ${endpoint}; send multipart/form-data with the file in a form field.`,
    });
  },
  malformed(detail: string): GatewayError {
    return errors.invalidRequest(
      `The multipart body could not be read (${detail}). Send a well-formed multipart/form-data body.`,
    );
  },
  unexpectedFile(field: string, expected: string): GatewayError {
    return errors.invalidRequest(
      `The form field ${field} holds a file, but this endpoint takes one file, in the field ${expected}.`,
      field,
    );
  },
  spoolFull(limitBytes: number): GatewayError {
    return new GatewayError({
      status: 503,
      type: ErrorType.unavailable,
      code: 'upload_spool_full',
      message: `The gateway is receiving too many uploads at once: this one would pass the ${limitBytes} bytes (${formatBytes(limitBytes)}) of files it spools at a time (general_settings.max_upload_spool_bytes). Retry shortly.`,
      retryAfter: SPOOL_RETRY_AFTER_SECONDS,
    });
  },
  spoolFailed(): GatewayError {
    return new GatewayError({
      status: 500,
      type: ErrorType.api,
      code: ErrorCode.internal,
      message:
        "The gateway could not store the upload on its own disk (the gateway's fault, not the request's). Retry; if it persists, report the x-request-id to the operator.",
    });
  },
  oneFileOnly(expected: string): GatewayError {
    return errors.invalidRequest(`Send exactly one file, in the field ${expected}.`, expected);
  },
};

/** Uploads take seconds to arrive: a retry sooner would most likely find the budget still spent. */
const SPOOL_RETRY_AFTER_SECONDS = 5;

function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${Math.round((bytes / (1024 * 1024)) * 100) / 100} MiB`;
  if (bytes >= 1024) return `${Math.round((bytes / 1024) * 100) / 100} KiB`;
  return `${bytes} bytes`;
}
