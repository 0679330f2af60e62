/** Maps a classified upstream failure to the sanitized GatewayError the caller receives. */
import { ErrorType, errors } from '../lib/error-catalogue.ts';
import { GatewayError } from '../lib/gateway-error.ts';
import { LocalFailure, UpstreamError } from '../providers/upstream-error.ts';

export function upstreamFailure(error: unknown, modelName: string): GatewayError {
  if (error instanceof GatewayError) return error;
  if (error instanceof LocalFailure) return errors.internal(); // our own failure: a 500, not the provider's
  if (!(error instanceof UpstreamError)) {
    return new GatewayError({
      status: 502,
      type: ErrorType.api,
      code: 'upstream_error',
      message: `The request to model '${modelName}' failed upstream. Retry later.`,
    });
  }
  const retryAfter =
    error.retryAfterMs !== undefined ? Math.max(1, Math.ceil(error.retryAfterMs / 1000)) : undefined;
  switch (error.kind) {
    case 'timeout':
    case 'pool_timeout':
    case 'connect':
      return new GatewayError({
        status: error.kind === 'timeout' ? 504 : 502,
        type: ErrorType.timeout,
        code: error.kind === 'timeout' ? 'upstream_timeout' : 'upstream_unreachable',
        message: `Model '${modelName}' did not answer in time (${error.message}). Retry later.`,
        ...(retryAfter !== undefined ? { retryAfter } : {}),
      });
    case 'status':
      return fromStatus(error, modelName, retryAfter);
    case 'too_large':
      // The request asked for more than the gateway reads; the same request would fail again.
      return new GatewayError({
        status: 502,
        type: ErrorType.api,
        code: 'upstream_answer_too_large',
        message: `The answer of model '${modelName}' is too large for the gateway (${error.message}). Ask for less in one request: fewer inputs, or encoding_format "base64" for embeddings (about a quarter of the size of floats).`,
        headers: { 'x-should-retry': 'false' },
      });
    case 'aborted':
      return new GatewayError({
        status: 499,
        type: ErrorType.api,
        code: 'client_closed_request',
        message: 'The request was cancelled.',
      });
    default:
      return new GatewayError({
        status: 502,
        type: ErrorType.api,
        code: 'upstream_error',
        message: `Model '${modelName}' returned an invalid or broken answer. Retry later.`,
      });
  }
}

function fromStatus(error: UpstreamError, modelName: string, retryAfter: number | undefined): GatewayError {
  const status = error.status ?? 502;
  if (status === 429) {
    return new GatewayError({
      status: 429,
      type: ErrorType.rateLimit,
      code: 'upstream_rate_limited',
      message: `Every deployment of model '${modelName}' is rate limited by its provider. Retry after the indicated time.`,
      retryAfter: retryAfter ?? 1,
    });
  }
  if (status === 400 || status === 422 || status === 413) {
    return new GatewayError({
      status: 400,
      type: ErrorType.invalidRequest,
      code: 'upstream_rejected_request',
      message: `The provider of model '${modelName}' rejected the request as invalid (${status}${error.providerCode ? `, ${error.providerCode}` : ''}). Check the request parameters.`,
    });
  }
  if (status === 401 || status === 403 || status === 404) {
    return new GatewayError({
      status: 502,
      type: ErrorType.api,
      code: 'upstream_configuration_error',
      message: `The provider of model '${modelName}' refused the gateway's request (${status}); the deployment is misconfigured. Tell the operator.`,
    });
  }
  return new GatewayError({
    status: 502,
    type: ErrorType.api,
    code: 'upstream_error',
    message: `The provider of model '${modelName}' failed (${status}). Retry later.`,
    ...(retryAfter !== undefined ? { retryAfter } : {}),
  });
}
