/**
 * POST /v1/audio/transcriptions: a multipart upload (the audio in `file`, the other fields in any
 * order), spooled to a private temporary file within `general_settings.max_upload_bytes` (and the
 * process's `max_upload_spool_bytes` of uploads spooled at once), decoded, handed to the modality pipeline
 * (each attempt streams the file again, so failover replays the same bytes), and answered in the
 * response_format asked for. The spooled file is deleted before the answer is sent, and when the caller
 * leaves; the process's spool root is swept of crashed processes' files at start and removed at close.
 */

import { decodeTranscriptionRequest } from '../../wire/audio/decode-transcription-request.ts';
import { encodeTranscription } from '../../wire/audio/encode-transcription.ts';
import type { App, AppDependencies } from '../app-types.ts';
import { answerHeaders, uploadContext } from '../modality-route.ts';
import { callerSecurity } from '../schemas/common-schemas.ts';
import { checkUploadRequest, registerMultipart, type UploadLimit } from '../uploads/multipart-scope.ts';
import { SpoolArea } from '../uploads/spool-area.ts';
import { receiveUpload } from '../uploads/spool-upload.ts';

const ENDPOINT = '/v1/audio/transcriptions';

export function registerTranscriptionsRoute(
  app: App,
  deps: Pick<AppDependencies, 'modalities' | 'config' | 'logger'>,
): void {
  const limit: UploadLimit = {
    maxFileBytes: deps.config.general_settings.max_upload_bytes,
    setting: 'general_settings.max_upload_bytes',
  };
  const area = new SpoolArea({
    maxSpoolBytes: deps.config.general_settings.max_upload_spool_bytes,
    logger: deps.logger,
  });
  app.addHook('onReady', async () => {
    await area.sweep();
  });
  app.addHook('onClose', () => area.close());
  // Multipart parsing lives in this route's own scope: every other route keeps refusing multipart bodies.
  app.register(async (scope) => {
    await registerMultipart(scope);
    // LiteLLM also serves its OpenAI routes without the /v1 prefix; clients configured for it keep working.
    for (const url of [ENDPOINT, '/audio/transcriptions']) {
      scope.post(
        url,
        {
          onRequest: app.authenticateCaller,
          preParsing: async (request, _reply, payload) => {
            checkUploadRequest(request, limit, ENDPOINT);
            return payload;
          },
          schema: {
            tags: ['proxy'],
            security: callerSecurity,
            summary:
              'Transcribe an uploaded audio file (multipart/form-data: file, model, language, prompt, response_format, temperature; groups with model_info.mode: audio_transcription).',
          },
        },
        async (request, reply) => {
          const upload = await receiveUpload(request, reply, { ...limit, fileField: 'file', area });
          try {
            const transcription = decodeTranscriptionRequest(upload.fields, upload.file);
            const outcome = await deps.modalities.transcribe(transcription, uploadContext(request, reply));
            const answer = encodeTranscription(outcome.value, transcription.response_format);
            await upload.dispose();
            return reply.headers(answerHeaders(request, outcome)).type(answer.contentType).send(answer.body);
          } finally {
            await upload.dispose();
          }
        },
      );
    }
  });
}
