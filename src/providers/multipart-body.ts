/**
 * A multipart/form-data request body for an upstream (audio uploads): text fields and one file,
 * encoded by the platform's FormData so the boundary and escaping are right, and streamed: the file
 * part is read from its spooled Blob as the socket drains, never held in memory whole.
 */
import type { UploadedFile } from '../canonical/modalities.ts';

export interface MultipartBody {
  contentType: string;
  body: AsyncIterable<Uint8Array>;
}

export async function multipartBody(
  fields: ReadonlyArray<readonly [name: string, value: string]>,
  file: { field: string; upload: UploadedFile },
): Promise<MultipartBody> {
  const form = new FormData();
  for (const [name, value] of fields) form.append(name, value);
  form.append(file.field, await file.upload.blob(), file.upload.filename);
  const encoded = new Response(form);
  const contentType = encoded.headers.get('content-type');
  if (!contentType || !encoded.body) throw new Error('FormData produced no multipart body');
  return { contentType, body: encoded.body as unknown as AsyncIterable<Uint8Array> };
}
