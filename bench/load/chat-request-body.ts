/**
 * The request every target receives: a small, realistic conversation (~1 KB), as chat completions, and
 * the same conversation as a Responses and an Anthropic Messages request (the translated phases).
 */

export const BENCH_MODEL = 'bench-model';

const SYSTEM =
  'You are a concise assistant for an online bookshop. Answer in two sentences at most, cite the catalogue ' +
  'number when you name a book, and never invent prices or availability.';
const TURNS = [
  {
    role: 'user',
    content: 'Which of your books would you recommend to someone who liked The Left Hand of Darkness?',
  },
  {
    role: 'assistant',
    content:
      'The Dispossessed (CAT-1974-017) is the closest match: same author, same interest in how societies work.',
  },
  { role: 'user', content: 'Is there anything by another author in the same spirit, and is it in stock?' },
];

/** The conversation on /v1/responses: instructions and input messages. */
export function responsesRequestBody(): string {
  return JSON.stringify({
    model: BENCH_MODEL,
    instructions: SYSTEM,
    input: TURNS,
    temperature: 0.2,
    max_output_tokens: 256,
    user: 'bench-user-42',
  });
}

/** The conversation on /v1/messages: system, messages and the required max_tokens. */
export function messagesRequestBody(): string {
  return JSON.stringify({
    model: BENCH_MODEL,
    system: SYSTEM,
    messages: TURNS,
    temperature: 0.2,
    max_tokens: 256,
    metadata: { user_id: 'bench-user-42' },
  });
}

export function chatRequestBody(stream: boolean): string {
  return JSON.stringify({
    model: BENCH_MODEL,
    messages: [
      {
        role: 'system',
        content:
          'You are a concise assistant for an online bookshop. Answer in two sentences at most, cite the catalogue ' +
          'number when you name a book, and never invent prices or availability.',
      },
      {
        role: 'user',
        content: 'Which of your books would you recommend to someone who liked The Left Hand of Darkness?',
      },
      {
        role: 'assistant',
        content:
          'The Dispossessed (CAT-1974-017) is the closest match: same author, same interest in how societies work.',
      },
      {
        role: 'user',
        content: 'Is there anything by another author in the same spirit, and is it in stock?',
      },
    ],
    temperature: 0.2,
    max_completion_tokens: 256,
    user: 'bench-user-42',
    ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  });
}
