/**
 * Request bodies of the identity admin API. The HTTP edge validates against these (strictly: no type
 * coercion, unknown keys rejected) and publishes them in OpenAPI; the service trusts their shape.
 */
import Type, { type Static } from 'typebox';
import { SEARCH_MAX_LENGTH } from '../store/db/repositories/text-search.ts';
import { modelOutputLimitProperty, parallelLimitProperty, scopeLimitProperties } from './limit-fields.ts';

export const EntityId = Type.String({
  pattern: '^[A-Za-z0-9._:@+-]{1,128}$',
  description: 'must be 1-128 letters, digits or . _ : @ + -',
});
const OptionalNullableString = Type.Optional(Type.Union([Type.String({ maxLength: 256 }), Type.Null()]));
const Metadata = Type.Optional(Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]));
const NullableId = Type.Optional(Type.Union([EntityId, Type.Null()]));
const CacheEnabled = Type.Optional(
  Type.Union([Type.Boolean(), Type.Null()], {
    description:
      'Response cache switch: true or false overrides general_settings.response_cache.enabled; null follows it (a key with null follows its team first).',
  }),
);

export const OrganizationBody = Type.Object(
  {
    organization_id: Type.Optional(EntityId),
    organization_alias: OptionalNullableString,
    metadata: Metadata,
    ...scopeLimitProperties,
  },
  { additionalProperties: false },
);

export const TeamBody = Type.Object(
  {
    team_id: Type.Optional(EntityId),
    team_alias: OptionalNullableString,
    organization_id: NullableId,
    metadata: Metadata,
    cache_enabled: CacheEnabled,
    ...scopeLimitProperties,
    ...modelOutputLimitProperty,
  },
  { additionalProperties: false },
);

export const UserBody = Type.Object(
  {
    user_id: Type.Optional(EntityId),
    email: Type.Optional(Type.Union([Type.String({ format: 'email', maxLength: 320 }), Type.Null()])),
    // `admin` is the earlier name of proxy_admin and is stored as proxy_admin.
    role: Type.Optional(Type.Enum(['proxy_admin', 'org_admin', 'member', 'admin'])),
    team_id: NullableId,
    organization_id: NullableId,
    metadata: Metadata,
    ...scopeLimitProperties,
  },
  { additionalProperties: false },
);

export const KeyBody = Type.Object(
  {
    key_name: OptionalNullableString,
    user_id: NullableId,
    team_id: NullableId,
    models: Type.Optional(
      Type.Union([
        Type.Array(Type.String({ minLength: 1, maxLength: 256 }), { maxItems: 1000 }),
        Type.Null(),
      ]),
    ),
    expires_at: Type.Optional(Type.Union([Type.String({ format: 'date-time' }), Type.Null()])),
    duration: Type.Optional(
      Type.String({ pattern: '^[1-9][0-9]*[smhd]$', description: 'must look like 30s, 15m, 12h or 30d' }),
    ),
    blocked: Type.Optional(Type.Boolean()),
    metadata: Metadata,
    cache_enabled: CacheEnabled,
    ...scopeLimitProperties,
    ...modelOutputLimitProperty,
    ...parallelLimitProperty,
  },
  { additionalProperties: false },
);

/** The largest `offset` of an admin list: beyond it no table has rows, and larger numbers lose precision. */
export const MAX_PAGE_OFFSET = 2_147_483_647;

export const PageQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_PAGE_OFFSET, default: 0 })),
});

/** `search` of the identity lists: part of an id or name, case-insensitive (text-search.ts). */
export const SearchParam = Type.Optional(
  Type.String({
    maxLength: SEARCH_MAX_LENGTH,
    description: 'Part of an id or name, case-insensitive; % and _ match themselves.',
  }),
);

export type OrganizationBody = Static<typeof OrganizationBody>;
export type TeamBody = Static<typeof TeamBody>;
export type UserBody = Static<typeof UserBody>;
export type KeyBody = Static<typeof KeyBody>;
