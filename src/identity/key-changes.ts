/** Turns a key body into stored changes: limits checked, `duration` or `expires_at` into an expiry. */
import { errors } from '../lib/error-catalogue.ts';
import type { ApiKeyChanges } from '../store/db/repositories/api-key-repository.ts';
import type { KeyBody } from './admin-schemas.ts';
import { validLimits } from './identity-admin-checks.ts';

const unitMs = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** The longest a key may be made to live: beyond it, dates stop being dates (issue 9). */
export const MAX_KEY_LIFETIME_MS = 36_500 * unitMs.d;

export function keyChanges(body: KeyBody, now: number): ApiKeyChanges {
  const { duration, expires_at, ...rest } = body;
  if (duration !== undefined && expires_at !== undefined) {
    throw errors.invalidRequest('Send either duration or expires_at, not both.', 'duration');
  }
  const changes: ApiKeyChanges = validLimits(rest);
  if (duration !== undefined) {
    const milliseconds = durationMs(duration);
    if (!(milliseconds <= MAX_KEY_LIFETIME_MS))
      throw errors.invalidRequest('duration: must be at most 100 years (36500d).', 'duration');
    changes.expires_at = now + milliseconds;
  }
  if (expires_at !== undefined) changes.expires_at = expires_at === null ? null : expiry(expires_at, now);
  return changes;
}

function durationMs(duration: string): number {
  const unit = duration.at(-1) as keyof typeof unitMs;
  return Number(duration.slice(0, -1)) * unitMs[unit];
}

/** A valid instant no later than 100 years ahead (a leap second such as 23:59:60 does not parse). */
function expiry(text: string, now: number): number {
  const at = Date.parse(text);
  if (!Number.isFinite(at) || at < 0 || at > now + MAX_KEY_LIFETIME_MS) {
    throw errors.invalidRequest(
      'expires_at: must be a real date-time between 1970 and 100 years from now (e.g. 2027-01-31T00:00:00Z).',
      'expires_at',
    );
  }
  return at;
}
