/**
 * How the text pipeline ends a request's charge: settle and fail the answer when an outbox-mode writer
 * could not accept it (spec rule 6), settle a request that already failed without letting the writer
 * change its answer, and read a failed routing's facts for its spend record.
 */
import { errors } from '../lib/error-catalogue.ts';
import { GatewayError, withHeaders } from '../lib/gateway-error.ts';
import type { RequestCharge } from './request-charge.ts';

/** A charge the outbox did not accept, carried out of the routing try block as the caller's 503. */
export class SpendNotRecorded extends Error {
  readonly failure: unknown;
  constructor(failure: unknown) {
    super('spend not recorded');
    this.failure = failure;
  }
}

/** Settles and, when an outbox-mode writer could not accept the charge, fails the answer with 503. */
export async function settleOrFail(
  charge: RequestCharge,
  status: number,
  headers: Readonly<Record<string, string>>,
): Promise<void> {
  try {
    await charge.settle(status, true);
  } catch {
    throw new SpendNotRecorded(withHeaders(errors.spendNotAccepted(), headers));
  }
}

/** Settles a request that already failed: a writer failure changes nothing for its caller. */
export function settleQuietly(charge: RequestCharge, status: number): void {
  charge.settle(status).catch(() => {});
}

/** Attempts and last deployment of a failed routing, from the headers routing put on its error. */
export function routingOf(error: unknown): [deploymentId: string | null, modelGroup: null, attempts: number] {
  const headers = error instanceof GatewayError ? error.headers : undefined;
  return [
    headers?.['x-switchboard-deployment'] ?? null,
    null,
    Number(headers?.['x-switchboard-attempts'] ?? 0),
  ];
}
