/** Public JSON views of identity records (ISO timestamps, never a key hash) and their schemas. */
import Type, { type TSchema } from 'typebox';
import type { ApiKeyRecord } from '../../store/db/repositories/api-key-repository.ts';
import { SpendTotalsView } from './spend-views.ts';

type Timestamped = { created_at: number; updated_at: number };

export function timestampedView<T extends Timestamped>(
  record: T,
): Omit<T, 'created_at' | 'updated_at'> & { created_at: string; updated_at: string } {
  return { ...record, created_at: isoTime(record.created_at), updated_at: isoTime(record.updated_at) };
}

export function keyView(record: ApiKeyRecord) {
  const { key_hash: _hash, expires_at, ...rest } = record;
  return { ...timestampedView(rest), expires_at: expires_at === null ? null : isoTimeOrNull(expires_at) };
}

/** A stored expiry that is not a representable date (written by an older version) reads as null, never a 500. */
function isoTimeOrNull(milliseconds: number): string | null {
  return Number.isFinite(milliseconds) && Math.abs(milliseconds) <= 8.64e15
    ? new Date(milliseconds).toISOString()
    : null;
}

function isoTime(milliseconds: number): string {
  return new Date(milliseconds).toISOString();
}

const NullableInteger = Type.Union([Type.Integer(), Type.Null()]);
const NullableString = Type.Union([Type.String(), Type.Null()]);
const NullableNumber = Type.Union([Type.Number(), Type.Null()]);
const CacheEnabled = Type.Union([Type.Boolean(), Type.Null()], {
  description: 'Response cache switch: null follows the gateway setting (a key: its team first).',
});
const NullableMap = Type.Union([Type.Record(Type.String(), Type.Integer()), Type.Null()]);
const Metadata = Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]);

const limitViewProperties = {
  rpm_limit: NullableInteger,
  tpm_limit: NullableInteger,
  rph_limit: NullableInteger,
  rpd_limit: NullableInteger,
  tpd_limit: NullableInteger,
  output_tpm_limit: NullableInteger,
  model_rpm_limit: NullableMap,
  model_tpm_limit: NullableMap,
  model_output_tpm_limit: NullableMap,
  max_budget: NullableNumber,
  soft_budget: NullableNumber,
  budget_duration: NullableString,
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
};

export const OrganizationView = Type.Object({
  organization_id: Type.String(),
  organization_alias: NullableString,
  metadata: Metadata,
  ...limitViewProperties,
  spend: Type.Optional(SpendTotalsView),
});

export const TeamView = Type.Object({
  team_id: Type.String(),
  team_alias: NullableString,
  organization_id: NullableString,
  metadata: Metadata,
  cache_enabled: CacheEnabled,
  ...limitViewProperties,
  spend: Type.Optional(SpendTotalsView),
});

export const UserView = Type.Object({
  user_id: Type.String(),
  email: NullableString,
  role: Type.String(),
  team_id: NullableString,
  organization_id: NullableString,
  metadata: Metadata,
  ...limitViewProperties,
});

export const KeyView = Type.Object({
  key_id: Type.String(),
  key_prefix: Type.String({ description: 'The start of the secret, for recognising the key.' }),
  key_name: NullableString,
  user_id: NullableString,
  team_id: NullableString,
  models: Type.Union([Type.Array(Type.String()), Type.Null()]),
  expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  blocked: Type.Boolean(),
  created_by: Type.Union([Type.String(), Type.Null()], {
    description: '`master` or `user:<user_id>`: who created the key (may not approve its MCP calls).',
  }),
  max_parallel_requests: NullableInteger,
  cache_enabled: CacheEnabled,
  metadata: Metadata,
  ...limitViewProperties,
  spend: Type.Optional(SpendTotalsView),
});

export const CreatedKeyView = Type.Object({
  key: Type.String({ description: 'The secret API key. Shown once; only a hash is stored.' }),
  ...KeyView.properties,
});

export function ListView(item: TSchema) {
  return Type.Object({
    object: Type.Literal('list'),
    data: Type.Array(item),
    total: Type.Integer(),
    limit: Type.Integer(),
    offset: Type.Integer(),
  });
}

export function DeletedView(idName: string) {
  return Type.Object({ deleted: Type.Literal(true), [idName]: Type.String() });
}
