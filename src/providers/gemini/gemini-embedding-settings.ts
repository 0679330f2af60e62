/** The embedding param of a `gemini` deployment: the Gemini API's task types, by its own names. */

export const GEMINI_TASK_TYPES = [
  'TASK_TYPE_UNSPECIFIED',
  'RETRIEVAL_QUERY',
  'RETRIEVAL_DOCUMENT',
  'SEMANTIC_SIMILARITY',
  'CLASSIFICATION',
  'CLUSTERING',
  'QUESTION_ANSWERING',
  'FACT_VERIFICATION',
  'CODE_RETRIEVAL_QUERY',
] as const;

export type GeminiTaskType = (typeof GEMINI_TASK_TYPES)[number];

/** A task type as written (LiteLLM users write `retrieval_query`): upper-cased, then checked. */
export function taskTypeOf(value: unknown): GeminiTaskType | undefined {
  const upper = typeof value === 'string' ? value.toUpperCase() : value;
  return (GEMINI_TASK_TYPES as readonly unknown[]).includes(upper) ? (upper as GeminiTaskType) : undefined;
}

export const TASK_TYPE_EXPECTED = `one of ${GEMINI_TASK_TYPES.join(', ')}`;
