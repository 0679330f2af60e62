/** The GatewayError a promise rejects with (a test fails if it resolves or rejects with anything else). */
import { GatewayError } from '../../src/lib/gateway-error.ts';

export async function refusal(promise: Promise<unknown>): Promise<GatewayError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('expected a GatewayError');
}
