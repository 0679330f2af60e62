/** The USD cost of one provider call: its billed units (images, audio seconds, searches, characters) or its tokens. */
import type { BilledUnits } from '../canonical/modalities.ts';
import type { Usage } from '../canonical/usage.ts';
import { type ModelPrices, tokenCost } from './token-cost.ts';

/** Each billed unit and the rate that prices it. */
export const UNIT_RATES: ReadonlyArray<readonly [keyof BilledUnits, keyof ModelPrices]> = [
  ['images', 'perImage'],
  ['audioSeconds', 'perAudioSecond'],
  ['searches', 'perRerankSearch'],
  ['characters', 'perCharacter'],
];

/**
 * A call that reports billed units is priced by them when every one has its rate: that is the whole
 * price, tokens the provider also reported are not added (a per-image price covers the image, and a
 * rerank search the tokens it read). When a unit has no rate, the call is priced by its tokens if the
 * provider reported some (gpt-image-1 bills its images as output tokens), else its cost is unknown.
 * A call without units is priced by its tokens. Null means a needed price or the usage is unknown.
 */
export function callCost(
  prices: ModelPrices,
  usage: Usage | undefined,
  units: BilledUnits | undefined,
): number | null {
  let unitCost = 0;
  let billed = false;
  let unpriced = false;
  for (const [unit, rateKey] of UNIT_RATES) {
    const count = units?.[unit];
    if (typeof count !== 'number' || !Number.isFinite(count) || count <= 0) continue;
    billed = true;
    const rate = prices[rateKey];
    if (typeof rate === 'number') unitCost += count * rate;
    else unpriced = true;
  }
  if (billed && !unpriced) return unitCost;
  if (billed) return usage !== undefined && reportsTokens(usage) ? tokenCost(prices, usage) : null;
  if (usage !== undefined) return tokenCost(prices, usage);
  // Units were reported, all zero: nothing was billed.
  return units === undefined ? null : 0;
}

function reportsTokens(usage: Usage): boolean {
  return usage.prompt_tokens > 0 || usage.completion_tokens > 0;
}
