/**
 * Request bodies of the MCP admin API. The HTTP edge validates against these (strictly, unknown keys
 * rejected) and publishes them in OpenAPI; the use cases check what a schema cannot (references,
 * reserved header names, bearer tokens).
 */
import Type, { type Static } from 'typebox';

const ServerKey = Type.String({
  pattern: '^[a-zA-Z0-9_-]{1,64}$',
  description: 'must be 1-64 letters, digits, _ or -',
});
const HeaderName = Type.String({
  pattern: "^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$",
  description: 'must be an HTTP header name',
});
const Id = Type.String({ minLength: 1, maxLength: 128 });
const NullableLimit = (description: string) =>
  Type.Optional(
    Type.Union([Type.Integer({ minimum: 1, maximum: 2_147_483_647 }), Type.Null()], { description }),
  );

const serverProperties = {
  server_key: ServerKey,
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  transport: Type.Optional(
    Type.Enum(['streamable_http', 'http'], { description: '`http` is stored as `streamable_http`' }),
  ),
  base_url: Type.String({ format: 'uri', maxLength: 2048 }),
  enabled: Type.Optional(Type.Boolean()),
  auth_mode: Type.Optional(Type.Enum(['none', 'bearer'])),
  auth_config: Type.Optional(
    Type.Object(
      { token: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 8192 }), Type.Null()])) },
      { additionalProperties: false, description: 'Write-only: the token is never returned.' },
    ),
  ),
  forwarded_headers_allowlist: Type.Optional(Type.Array(HeaderName, { maxItems: 50 })),
  request_timeout_ms: Type.Optional(Type.Integer({ minimum: 1, maximum: 600_000 })),
};

export const McpServerCreateBody = Type.Object(serverProperties, { additionalProperties: false });

export const McpServerUpdateBody = Type.Object(
  {
    ...serverProperties,
    server_key: Type.Optional(ServerKey),
    base_url: Type.Optional(serverProperties.base_url),
  },
  { additionalProperties: false },
);

export const ScopeType = Type.Enum(['organization', 'team', 'api_key']);

export const McpBindingBody = Type.Object(
  {
    server_id: Id,
    scope_type: ScopeType,
    scope_id: Id,
    enabled: Type.Optional(Type.Boolean()),
    tool_allowlist: Type.Optional(
      Type.Union(
        [Type.Array(Type.String({ minLength: 1, maxLength: 256 }), { maxItems: 1000 }), Type.Null()],
        {
          description: 'Tool names without the server prefix; null or absent allows every tool.',
        },
      ),
    ),
  },
  { additionalProperties: false },
);

export const McpToolPolicyBody = Type.Object(
  {
    server_id: Id,
    tool_name: Type.String({
      minLength: 1,
      maxLength: 256,
      description: 'A tool name, or * for every tool.',
    }),
    scope_type: Type.Optional(
      Type.Union([ScopeType, Type.Null()], { description: 'Omit for the server-wide default.' }),
    ),
    scope_id: Type.Optional(Type.Union([Id, Type.Null()])),
    enabled: Type.Optional(Type.Boolean({ description: 'false denies the tool to this scope (-32003).' })),
    require_approval: Type.Optional(Type.Enum(['never', 'manual'])),
    max_rpm: NullableLimit('Calls per minute per API key; null for no limit.'),
    max_concurrency: NullableLimit("Concurrent calls in the policy's scope; null for no limit."),
    result_cache_ttl_seconds: NullableLimit('Seconds identical calls of one API key are served from cache.'),
    max_total_execution_time_ms: NullableLimit('Upper bound of a call, upstream included (-32030).'),
    is_ceiling: Type.Optional(
      Type.Boolean({
        description:
          'Server-wide policies only: true makes it a ceiling narrower scopes may only tighten; false (default) a default they may override.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const McpDecisionBody = Type.Object(
  {
    status: Type.Enum(['approved', 'rejected']),
    decision_comment: Type.Optional(Type.String({ maxLength: 2000 })),
  },
  { additionalProperties: false },
);

export type McpServerCreateBody = Static<typeof McpServerCreateBody>;
export type McpServerUpdateBody = Static<typeof McpServerUpdateBody>;
export type McpBindingBody = Static<typeof McpBindingBody>;
export type McpToolPolicyBody = Static<typeof McpToolPolicyBody>;
export type McpDecisionBody = Static<typeof McpDecisionBody>;
