/**
 * Schemas of the file and batch routes (OpenAI's file and batch objects, their lists and list queries).
 * The answers are serialized with these schemas, so only the declared fields leave the gateway.
 */
import Type from 'typebox';

const Seconds = Type.Integer({ description: 'Epoch seconds.' });
const SecondsOrNull = Type.Union([Seconds, Type.Null()]);
const IdOrNull = Type.Union([Type.String(), Type.Null()]);

/** A list cursor: an object id (letters, digits, `-` and `_`); anything else is a 400 naming `after`. */
const Cursor = Type.String({
  minLength: 1,
  maxLength: 128,
  pattern: '^[A-Za-z0-9_-]+$',
  description: 'The last id of the previous page.',
});

export const FileObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('file'),
  bytes: Type.Integer(),
  created_at: Seconds,
  filename: Type.String(),
  purpose: Type.String({ description: '`batch` (uploaded) or `batch_output` (written by a batch).' }),
  status: Type.Literal('processed'),
  expires_at: Type.Null(),
  status_details: Type.Null(),
});

export const FileParams = Type.Object({ file_id: Type.String({ minLength: 1, maxLength: 128 }) });

export const FileListQuery = Type.Object({
  after: Type.Optional(Cursor),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000, description: 'Default 10000.' })),
  order: Type.Optional(
    Type.Union([Type.Literal('asc'), Type.Literal('desc')], {
      description: 'By created_at: desc (newest first, the default) or asc.',
    }),
  ),
  purpose: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
});

export const DeletedFile = Type.Object({
  id: Type.String(),
  object: Type.Literal('file'),
  deleted: Type.Boolean(),
});

const BatchError = Type.Object({
  code: Type.String(),
  message: Type.String(),
  param: Type.Union([Type.String(), Type.Null()]),
  line: Type.Union([Type.Integer(), Type.Null()]),
});

export const BatchObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('batch'),
  endpoint: Type.String(),
  errors: Type.Union([
    Type.Object({ object: Type.Literal('list'), data: Type.Array(BatchError) }),
    Type.Null(),
  ]),
  input_file_id: Type.String(),
  completion_window: Type.String(),
  status: Type.Union([
    Type.Literal('validating'),
    Type.Literal('in_progress'),
    Type.Literal('finalizing'),
    Type.Literal('completed'),
    Type.Literal('failed'),
    Type.Literal('expired'),
    Type.Literal('cancelling'),
    Type.Literal('cancelled'),
  ]),
  output_file_id: IdOrNull,
  error_file_id: IdOrNull,
  created_at: Seconds,
  in_progress_at: SecondsOrNull,
  expires_at: SecondsOrNull,
  finalizing_at: SecondsOrNull,
  completed_at: SecondsOrNull,
  failed_at: SecondsOrNull,
  expired_at: SecondsOrNull,
  cancelling_at: SecondsOrNull,
  cancelled_at: SecondsOrNull,
  request_counts: Type.Object({
    total: Type.Integer(),
    completed: Type.Integer(),
    failed: Type.Integer(),
  }),
  metadata: Type.Union([Type.Record(Type.String(), Type.String()), Type.Null()]),
});

/** Documents POST /batches; the fields are checked by parseCreateBatch, whose refusals name them. */
export const CreateBatchBody = Type.Object(
  {
    input_file_id: Type.Optional(Type.Unknown({ description: 'An uploaded file with purpose batch.' })),
    endpoint: Type.Optional(Type.Unknown({ description: '/v1/embeddings or /v1/chat/completions.' })),
    completion_window: Type.Optional(Type.Unknown({ description: '24h (missing or null means 24h).' })),
    metadata: Type.Optional(Type.Unknown({ description: 'Up to 16 string pairs, or null.' })),
  },
  { additionalProperties: true },
);

export const BatchParams = Type.Object({ batch_id: Type.String({ minLength: 1, maxLength: 128 }) });

export const BatchListQuery = Type.Object({
  after: Type.Optional(Cursor),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'Default 20.' })),
});

/** OpenAI's cursor page: `{object: "list", data, first_id, last_id, has_more}`. */
export const ListOf = <Item extends Parameters<typeof Type.Array>[0]>(item: Item) =>
  Type.Object({
    object: Type.Literal('list'),
    data: Type.Array(item),
    first_id: IdOrNull,
    last_id: IdOrNull,
    has_more: Type.Boolean(),
  });

/** The page answer of a list of objects with ids. */
export function listPage<Item extends { id: string }>(data: Item[], hasMore: boolean) {
  return {
    object: 'list' as const,
    data,
    first_id: data[0]?.id ?? null,
    last_id: data.at(-1)?.id ?? null,
    has_more: hasMore,
  };
}
