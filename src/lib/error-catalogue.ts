/** Factories for every GatewayError the service raises, so status, type and code never drift apart. */
import { GatewayError } from './gateway-error.ts';

export const ErrorType = {
  invalidRequest: 'invalid_request_error',
  authentication: 'authentication_error',
  permission: 'permission_error',
  notFound: 'not_found_error',
  conflict: 'conflict_error',
  rateLimit: 'rate_limit_error',
  api: 'api_error',
  unavailable: 'service_unavailable_error',
  timeout: 'timeout_error',
} as const;

export const ErrorCode = {
  invalidRequest: 'invalid_request',
  invalidJson: 'invalid_json',
  bodyTooLarge: 'request_too_large',
  unsupportedMediaType: 'unsupported_media_type',
  missingApiKey: 'missing_api_key',
  invalidApiKey: 'invalid_api_key',
  expiredApiKey: 'expired_api_key',
  blockedApiKey: 'blocked_api_key',
  masterKeyRequired: 'master_key_required',
  modelNotAllowed: 'model_not_allowed',
  modelNotFound: 'model_not_found',
  notFound: 'not_found',
  routeNotFound: 'route_not_found',
  conflict: 'conflict',
  restartRequired: 'restart_required',
  internal: 'internal_error',
  notReady: 'not_ready',
  upstreamError: 'upstream_error',
  upstreamTimeout: 'upstream_timeout',
  noHealthyDeployment: 'no_healthy_deployment',
  noDeploymentCapacity: 'no_deployment_capacity',
  sharedStoreUnavailable: 'shared_store_unavailable',
  invalidationQueueUnavailable: 'invalidation_queue_unavailable',
  auditLogUnavailable: 'audit_log_unavailable',
  databaseUnavailable: 'database_unavailable',
  jsonTooDeep: 'json_too_deep',
  bodyReadTimeout: 'request_body_timeout',
  tooManyFailedAuthentications: 'too_many_failed_authentications',
  wrongEndpointForModel: 'model_not_supported_by_endpoint',
} as const;

export const errors = {
  invalidRequest(message: string, param: string | null = null): GatewayError {
    return new GatewayError({
      status: 400,
      type: ErrorType.invalidRequest,
      code: ErrorCode.invalidRequest,
      message,
      param,
    });
  },
  invalidJson(detail: string): GatewayError {
    return new GatewayError({
      status: 400,
      type: ErrorType.invalidRequest,
      code: ErrorCode.invalidJson,
      message: `The request body is not valid JSON (${detail}). Send a JSON object with Content-Type: application/json.`,
    });
  },
  wrongEndpointForModel(
    model: string,
    mode: string,
    endpoint: string,
    serves: string,
    endpointOfMode: string | undefined,
  ): GatewayError {
    const next = endpointOfMode ? `Call ${endpointOfMode} for it.` : `No endpoint serves ${mode} models yet.`;
    return new GatewayError({
      status: 400,
      type: ErrorType.invalidRequest,
      code: ErrorCode.wrongEndpointForModel,
      param: 'model',
      message: `Model '${model}' is a ${mode} model (model_info.mode); ${endpoint} serves ${serves} models. ${next}`,
    });
  },
  tooManyFailedAuthentications(retryAfter: number): GatewayError {
    return new GatewayError({
      status: 429,
      type: ErrorType.rateLimit,
      code: ErrorCode.tooManyFailedAuthentications,
      message: `Too many unknown keys from this address; this one is not valid either. Check the key: a valid key is always accepted, unknown ones are answered 401 again after ${retryAfter} s.`,
      retryAfter,
    });
  },
  bodyReadTimeout(timeoutMs: number): GatewayError {
    return new GatewayError({
      status: 408,
      type: ErrorType.timeout,
      code: ErrorCode.bodyReadTimeout,
      message: `The request body did not arrive within ${timeoutMs / 1000} s (general_settings.body_read_timeout_seconds). Send it at once.`,
      headers: { connection: 'close' },
    });
  },
  jsonTooDeep(maxDepth: number): GatewayError {
    return new GatewayError({
      status: 400,
      type: ErrorType.invalidRequest,
      code: ErrorCode.jsonTooDeep,
      message: `The request body nests arrays and objects deeper than ${maxDepth} levels, the limit. Flatten it.`,
    });
  },
  bodyTooLarge(limitBytes: number): GatewayError {
    return new GatewayError({
      status: 413,
      type: ErrorType.invalidRequest,
      code: ErrorCode.bodyTooLarge,
      message: `The request body exceeds ${limitBytes} bytes. Send a smaller body or raise general_settings.max_request_body_bytes.`,
    });
  },
  unsupportedMediaType(contentType: string): GatewayError {
    return new GatewayError({
      status: 415,
      type: ErrorType.invalidRequest,
      code: ErrorCode.unsupportedMediaType,
      message: `Content-Type ${contentType} is not supported here; send application/json.`,
    });
  },
  missingApiKey(): GatewayError {
    return new GatewayError({
      status: 401,
      type: ErrorType.authentication,
      code: ErrorCode.missingApiKey,
      message: 'No API key provided. Send it as "Authorization: Bearer <API_KEY>".',
    });
  },
  invalidApiKey(): GatewayError {
    return new GatewayError({
      status: 401,
      type: ErrorType.authentication,
      code: ErrorCode.invalidApiKey,
      message: 'The API key is not valid. Check it, or create a new one with POST /ui/api/keys.',
    });
  },
  expiredApiKey(): GatewayError {
    return new GatewayError({
      status: 401,
      type: ErrorType.authentication,
      code: ErrorCode.expiredApiKey,
      message: 'The API key has expired. Ask an administrator for a new key.',
    });
  },
  blockedApiKey(): GatewayError {
    return new GatewayError({
      status: 401,
      type: ErrorType.authentication,
      code: ErrorCode.blockedApiKey,
      message: 'The API key is blocked. Ask an administrator to unblock it or issue a new key.',
    });
  },
  masterKeyRequired(): GatewayError {
    return new GatewayError({
      status: 403,
      type: ErrorType.permission,
      code: ErrorCode.masterKeyRequired,
      message: 'This admin endpoint needs the master key or the API key of a user whose role is admin.',
    });
  },
  modelNotAllowed(model: string): GatewayError {
    return new GatewayError({
      status: 403,
      type: ErrorType.permission,
      code: ErrorCode.modelNotAllowed,
      message: `This API key may not use model '${model}'. GET /v1/models lists the models it may use.`,
      param: 'model',
    });
  },
  modelNotFound(model: string): GatewayError {
    return new GatewayError({
      status: 404,
      type: ErrorType.invalidRequest,
      code: ErrorCode.modelNotFound,
      message: `The model '${model}' does not exist on this gateway. GET /v1/models lists the available models.`,
      param: 'model',
    });
  },
  notFound(resource: string, id: string): GatewayError {
    return new GatewayError({
      status: 404,
      type: ErrorType.notFound,
      code: ErrorCode.notFound,
      message: `No ${resource} with id '${id}' exists.`,
    });
  },
  /** A client error raised by the HTTP framework or a plugin, kept at its status in our envelope. */
  clientError(status: number): GatewayError {
    return new GatewayError({
      status,
      type: status === 404 ? ErrorType.notFound : ErrorType.invalidRequest,
      code: status === 404 ? ErrorCode.notFound : ErrorCode.invalidRequest,
      message:
        status === 404
          ? 'Not found. See /docs for the available endpoints.'
          : `The request is malformed (HTTP ${status}). Check the URL, headers and body.`,
    });
  },
  routeNotFound(method: string, url: string): GatewayError {
    return new GatewayError({
      status: 404,
      type: ErrorType.invalidRequest,
      code: ErrorCode.routeNotFound,
      message: `No route ${method} ${url}. See /docs for the available endpoints.`,
    });
  },
  conflict(message: string, code: string = ErrorCode.conflict): GatewayError {
    return new GatewayError({ status: 409, type: ErrorType.conflict, code, message });
  },
  /** A setting read only at start (spec Versioning 6): the admin settings API cannot change it. */
  restartRequired(setting: string, message: string): GatewayError {
    return new GatewayError({
      status: 409,
      type: ErrorType.conflict,
      code: ErrorCode.restartRequired,
      message,
      param: setting,
    });
  },
  notReady(): GatewayError {
    return new GatewayError({
      status: 503,
      type: ErrorType.unavailable,
      code: ErrorCode.notReady,
      message: 'The gateway is shutting down; retry on another replica.',
      retryAfter: 1,
    });
  },
  invalidationQueueUnavailable(): GatewayError {
    return new GatewayError({
      status: 503,
      type: ErrorType.unavailable,
      code: ErrorCode.invalidationQueueUnavailable,
      message:
        'The change was not saved: its cache invalidation could not be queued, so replicas could keep the old value. Retry shortly.',
      retryAfter: 1,
    });
  },
  auditLogUnavailable(): GatewayError {
    return new GatewayError({
      status: 503,
      type: ErrorType.unavailable,
      code: ErrorCode.auditLogUnavailable,
      message: 'The change was not saved: its audit log entry could not be written. Retry shortly.',
      retryAfter: 1,
    });
  },
  /** DELETE /ui/api/cache could not reach Redis; entries it had already deleted stay deleted. */
  cachePurgeUnavailable(): GatewayError {
    return new GatewayError({
      status: 503,
      type: ErrorType.unavailable,
      code: ErrorCode.sharedStoreUnavailable,
      message:
        'The cache purge did not finish: the shared store (Redis) did not answer. Entries already deleted stay deleted; retry shortly.',
      retryAfter: 1,
    });
  },
  /** Outbox mode: the answer's charge could not be accepted durably, so the answer is withheld. */
  spendNotAccepted(): GatewayError {
    return new GatewayError({
      status: 503,
      type: ErrorType.unavailable,
      code: 'spend_not_accepted',
      message:
        'The answer could not be recorded for accounting (spend_ingestion_mode: outbox), so it is not delivered. Retry; if it persists, tell the operator to check the telemetry database.',
      retryAfter: 1,
    });
  },
  /** The database could not be reached (a restart, a failover): retryable, unlike our own failure. */
  databaseUnavailable(): GatewayError {
    return new GatewayError({
      status: 503,
      type: ErrorType.unavailable,
      code: ErrorCode.databaseUnavailable,
      message: 'The gateway cannot reach its database right now. Retry shortly.',
      retryAfter: 1,
    });
  },
  // --- HTTP edge (issue 25): body admission and the files/batches switch ---
  /** A key's request bodies in flight fill its share (general_settings.max_concurrent_body_bytes_per_key). */
  keyBodyBytesExceeded(shareBytes: number): GatewayError {
    return new GatewayError({
      status: 429,
      type: ErrorType.rateLimit,
      code: 'key_body_bytes_exceeded',
      param: 'key_body_bytes',
      message: `This API key is already sending ${shareBytes} bytes of request bodies at once, its share (general_settings.max_concurrent_body_bytes_per_key). Retry when one of them has been sent, or send fewer large requests at once.`,
      retryAfter: 1,
    });
  },
  batchesDisabled(): GatewayError {
    return new GatewayError({
      status: 404,
      type: ErrorType.notFound,
      code: 'batches_disabled',
      message:
        'Files and batches are disabled on this gateway. The operator enables them with general_settings.embeddings_batch_enabled: true.',
    });
  },
  // Administration refusals (issue 25: scoped administrators, keys for administrators, policy ceilings).
  outsideAdminScope(reason: string): GatewayError {
    return new GatewayError({
      status: 403,
      type: ErrorType.permission,
      code: 'outside_admin_scope',
      message: `Organization administrators manage only their own organization: ${reason}.`,
    });
  },
  keyForAnotherAdministrator(userId: string | undefined): GatewayError {
    return new GatewayError({
      status: 403,
      type: ErrorType.permission,
      code: 'key_for_another_administrator',
      message: `${userId ? `User '${userId}'` : 'The user'} is an administrator: only the master key may give them a key (its minter would know it). Ask the operator, or let them mint their own.`,
      param: 'user_id',
    });
  },
  belowPolicyCeiling(field: string, reason: string): GatewayError {
    return new GatewayError({
      status: 403,
      type: ErrorType.permission,
      code: 'below_policy_ceiling',
      message: `${field}: ${reason}; a narrower policy may only tighten the server-wide ceiling. Ask a proxy administrator.`,
      param: field,
    });
  },
  /** allow_requests_on_db_unavailable: a key not in this replica's cache cannot be checked while the database is down. */
  keyNotCheckable(): GatewayError {
    return new GatewayError({
      status: 503,
      type: ErrorType.unavailable,
      code: ErrorCode.databaseUnavailable,
      message:
        "This API key cannot be checked right now: the gateway's database is unavailable and the key was not used recently on this replica. Retry shortly; keys in use keep working.",
      retryAfter: 1,
    });
  },
  internal(): GatewayError {
    return new GatewayError({
      status: 500,
      type: ErrorType.api,
      code: ErrorCode.internal,
      message:
        'The gateway failed unexpectedly. Retry; if it persists, report the x-request-id to the operator.',
    });
  },
} as const;
