/** The chat-completions request every target receives: a small, realistic conversation (~1 KB). */

export const BENCH_MODEL = 'bench-model';

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
