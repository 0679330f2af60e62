/**
 * The `elevenlabs` adapter: ElevenLabs' speech provider, serving text to speech and speech to text (no
 * chat) over one connection pool per deployment. The `xi-api-key` header carries the key.
 */
import type {
  DeploymentSettings,
  ProviderAdapter,
  SpeechCapability,
  TranscriptionCapability,
} from '../provider-adapter.ts';
import { ElevenLabsClient } from './elevenlabs-client.ts';
import type { ElevenLabsEndpoint } from './elevenlabs-settings.ts';
import { ElevenLabsSpeech } from './elevenlabs-speech.ts';
import { ElevenLabsTranscription } from './elevenlabs-transcription.ts';

export class ElevenLabsAdapter implements ProviderAdapter {
  readonly speech: SpeechCapability;
  readonly transcription: TranscriptionCapability;
  private readonly client: ElevenLabsClient;

  constructor(endpoint: ElevenLabsEndpoint, settings: DeploymentSettings) {
    this.client = new ElevenLabsClient(endpoint, settings);
    this.speech = new ElevenLabsSpeech(this.client);
    this.transcription = new ElevenLabsTranscription(this.client);
  }

  close(): Promise<void> {
    return this.client.close();
  }
}
