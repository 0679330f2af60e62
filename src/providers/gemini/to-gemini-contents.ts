/**
 * Canonical messages → Gemini `contents` and `systemInstruction`: system and developer text becomes the
 * system instruction, assistant turns become `model` turns with text and functionCall parts, tool results
 * become functionResponse parts of a `user` turn, and consecutive turns of one role are merged.
 */
import type { ChatMessage, ContentPart } from '../../canonical/chat-request.ts';
import { refusedRequest } from './gemini-errors.ts';
import { thoughtSignatureOf } from './gemini-tool-call-ids.ts';
import type { GeminiContent, GeminiPart, GeminiRequest } from './gemini-types.ts';
import { mediaPart } from './to-gemini-media.ts';

export function toGeminiContents(
  messages: readonly ChatMessage[],
): Pick<GeminiRequest, 'contents' | 'systemInstruction'> {
  const contents: GeminiContent[] = [];
  const system: Array<{ text: string }> = [];
  const add = (role: GeminiContent['role'], parts: GeminiPart[]) => {
    if (parts.length === 0) return;
    const last = contents.at(-1);
    if (last?.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };
  messages.forEach((message, index) => {
    switch (message.role) {
      case 'system':
      case 'developer': {
        const text = textOf(message.content);
        if (text) system.push({ text });
        break;
      }
      case 'assistant':
        add('model', assistantParts(message));
        break;
      case 'tool':
        add('user', [toolResultPart(message, toolNameFor(messages, index))]);
        break;
      default:
        add('user', userParts(message.content));
    }
  });
  return system.length > 0 ? { contents, systemInstruction: { parts: system } } : { contents };
}

/** The text of a message's content: a string, or its text parts joined. */
export function textOf(content: ChatMessage['content']): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let text = '';
  for (const part of content) {
    if (part.type === 'text' && typeof part.text === 'string') text += part.text;
    else if (part.type === 'refusal' && typeof part.refusal === 'string') text += part.refusal;
  }
  return text;
}

function userParts(content: ChatMessage['content']): GeminiPart[] {
  if (typeof content === 'string') return content ? [{ text: content }] : [];
  if (!Array.isArray(content)) return [];
  const parts: GeminiPart[] = [];
  for (const part of content as ContentPart[]) {
    if (part.type === 'text') {
      if (typeof part.text === 'string' && part.text) parts.push({ text: part.text });
    } else {
      parts.push(mediaPart(part));
    }
  }
  return parts;
}

function assistantParts(message: ChatMessage): GeminiPart[] {
  const text = textOf(message.content);
  const parts: GeminiPart[] = text ? [{ text }] : [];
  for (const call of message.tool_calls ?? []) {
    const signature = thoughtSignatureOf(call.id);
    parts.push({
      functionCall: { name: call.function.name, args: argumentsObject(call.function.arguments) },
      ...(signature ? { thoughtSignature: signature } : {}),
    });
  }
  return parts;
}

/** Gemini takes function arguments as an object; OpenAI carries them as JSON text. */
function argumentsObject(text: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (isPlainObject(parsed)) return parsed;
  } catch {
    // refused below
  }
  throw refusedRequest(
    'invalid_tool_call_arguments',
    'a tool call of the conversation has arguments that are not a JSON object',
  );
}

function toolResultPart(message: ChatMessage, name: string): GeminiPart {
  const text = textOf(message.content);
  let content: unknown = text;
  if (text.trimStart().startsWith('{')) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (isPlainObject(parsed)) content = parsed;
    } catch {
      // not JSON: sent as text
    }
  }
  return { functionResponse: { name, response: { content } } };
}

/** Gemini matches results to calls by function name: the name of the earlier call with this id. */
function toolNameFor(messages: readonly ChatMessage[], index: number): string {
  const id = messages[index]!.tool_call_id;
  for (let at = index - 1; at >= 0; at--) {
    const call = messages[at]!.tool_calls?.find((candidate) => candidate.id === id);
    if (call) return call.function.name;
  }
  const name = messages[index]!.name;
  if (typeof name === 'string' && name) return name;
  throw refusedRequest(
    'unknown_tool_call_id',
    'a tool message answers a tool_call_id that no earlier assistant message made',
  );
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
