/**
 * Nothing inert (issue 10): a setting either takes effect or says it does not. Descriptive `model_info`
 * keys (LiteLLM files carry many) are accepted with one warning per key saying Switchboard does not read
 * them.
 */
import type { ConfigFile } from './config-schema.ts';

/** model_info keys the gateway reads; any other is descriptive. */
export const MODEL_INFO_READ = [
  'id',
  'rpm_limit',
  'tpm_limit',
  'mode',
  'max_input_tokens',
  'owned_by',
  // voice_id, read by speech providers (providers/elevenlabs/, providers/openai/openai-audio.ts).
  'default_params',
  // Prices, read by accounting/price-book.ts.
  'input_cost_per_token',
  'output_cost_per_token',
  'cache_read_input_token_cost',
  'cache_creation_input_token_cost',
  'output_cost_per_reasoning_token',
  'input_cost_per_audio_token',
  'output_cost_per_audio_token',
  'output_cost_per_image',
  'input_cost_per_second',
  'input_cost_per_query',
  'input_cost_per_character',
  'base_model',
];

export function checkInertSettings(file: ConfigFile, warnings: string[]): void {
  const unread = new Map<string, number>();
  for (const entry of file.model_list ?? []) {
    for (const key of Object.keys(entry.model_info ?? {}))
      if (!MODEL_INFO_READ.includes(key)) unread.set(key, (unread.get(key) ?? 0) + 1);
  }
  for (const [key, count] of unread) {
    warnings.push(
      `model_info.${key} (${count} deployment${count > 1 ? 's' : ''}) is not read by Switchboard: descriptive only`,
    );
  }
}
