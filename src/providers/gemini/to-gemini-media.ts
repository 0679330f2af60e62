/**
 * Canonical image, audio and file content parts → Gemini `inlineData` (data URLs, base64 audio) or
 * `fileData` (http(s) URLs whose media type the file extension gives). Anything else is refused with a
 * 400 rather than sent as a text reference the model would silently misread.
 */
import type { ContentPart } from '../../canonical/chat-request.ts';
import { refusedRequest } from './gemini-errors.ts';
import type { GeminiPart } from './gemini-types.ts';

const mediaTypesByExtension: Readonly<Record<string, string>> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
  heic: 'image/heic',
  heif: 'image/heif',
  pdf: 'application/pdf',
};

export function mediaPart(part: ContentPart): GeminiPart {
  switch (part.type) {
    case 'image_url': {
      const url = (part.image_url as { url?: unknown } | undefined)?.url;
      if (typeof url === 'string') return urlPart(url);
      break;
    }
    case 'input_audio': {
      const audio = part.input_audio as { data?: unknown; format?: unknown } | undefined;
      if (typeof audio?.data === 'string' && typeof audio.format === 'string')
        return { inlineData: { mimeType: `audio/${audio.format}`, data: audio.data } };
      break;
    }
    case 'file': {
      const data = (part.file as { file_data?: unknown } | undefined)?.file_data;
      if (typeof data === 'string' && data.startsWith('data:')) return dataUrlPart(data);
      throw refusedRequest(
        'unsupported_file_part',
        'file parts must carry file_data as a data URL for gemini',
      );
    }
  }
  throw refusedRequest(
    'unsupported_content_part',
    `content parts of type '${String(part.type)}' are not supported by gemini`,
  );
}

function urlPart(url: string): GeminiPart {
  if (url.startsWith('data:')) return dataUrlPart(url);
  if (/^https?:\/\//i.test(url)) {
    const mimeType = mediaTypeOf(url);
    if (mimeType) return { fileData: { fileUri: url, mimeType } };
  }
  throw refusedRequest(
    'unsupported_image_url',
    'image URLs must be data URLs, or http(s) URLs ending in a known image extension, for gemini',
  );
}

/** `data:<type>[;base64],<data>` → inlineData (Gemini takes base64 only). */
function dataUrlPart(url: string): GeminiPart {
  const comma = url.indexOf(',');
  const header = comma === -1 ? '' : url.slice(5, comma);
  const [mimeType, ...flags] = header.split(';');
  if (comma === -1 || !mimeType)
    throw refusedRequest('invalid_data_url', 'a data URL of the request has no media type');
  const payload = url.slice(comma + 1);
  if (flags.includes('base64')) return { inlineData: { mimeType, data: payload } };
  try {
    return {
      inlineData: { mimeType, data: Buffer.from(decodeURIComponent(payload), 'utf8').toString('base64') },
    };
  } catch {
    throw refusedRequest('invalid_data_url', 'a data URL of the request is not validly percent-encoded');
  }
}

function mediaTypeOf(url: string): string | undefined {
  let pathname: string;
  try {
    pathname = new URL(url).pathname;
  } catch {
    return undefined;
  }
  const extension = /\.([A-Za-z0-9]{1,5})$/.exec(pathname)?.[1]?.toLowerCase();
  return extension ? mediaTypesByExtension[extension] : undefined;
}
