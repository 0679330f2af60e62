/**
 * Tool call ids for Gemini, which has none of its own: `call_<index>`, with the part's thought signature
 * appended when the model sent one, so that it comes back on the functionCall part of the next request
 * (Gemini 3 refuses a function-calling turn whose signature is missing; OpenAI clients echo ids as is).
 */

const SIGNATURE_SEPARATOR = '__thought__';

export function toolCallId(index: number, thoughtSignature: string | undefined): string {
  return thoughtSignature ? `call_${index}${SIGNATURE_SEPARATOR}${thoughtSignature}` : `call_${index}`;
}

/** The thought signature carried in a tool call id, when it carries one. */
export function thoughtSignatureOf(id: string | undefined): string | undefined {
  if (id === undefined) return undefined;
  const at = id.indexOf(SIGNATURE_SEPARATOR);
  return at === -1 ? undefined : id.slice(at + SIGNATURE_SEPARATOR.length) || undefined;
}
