/**
 * Decodes a chat-completions body into the canonical request. OpenAI-shaped input maps almost 1:1 and
 * unknown fields are kept for the upstream; this stage enforces the rules the spec's "Chat message"
 * table sets, answering 400 with `param` naming the offending field (`messages[2].content`).
 */
import type { ChatMessage, ChatRequest } from '../../canonical/chat-request.ts';
import { errors } from '../../lib/error-catalogue.ts';
import type { GatewayError } from '../../lib/gateway-error.ts';

const contentRequired = new Set(['system', 'developer', 'user', 'tool']);
const roles = new Set(['system', 'developer', 'user', 'assistant', 'tool']);

export function decodeChatRequest(body: unknown): ChatRequest {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw errors.invalidRequest('The body must be a JSON object with model and messages.');
  }
  const request = body as Record<string, unknown>;
  if (typeof request.model !== 'string' || request.model.length === 0) {
    throw errors.invalidRequest(
      'model: must be a non-empty string naming a model from GET /v1/models.',
      'model',
    );
  }
  if (!Array.isArray(request.messages) || request.messages.length === 0) {
    throw errors.invalidRequest('messages: must be a non-empty list of chat messages.', 'messages');
  }
  if (request.stream !== undefined && request.stream !== null && typeof request.stream !== 'boolean') {
    throw errors.invalidRequest('stream: must be true or false.', 'stream');
  }
  if (request.max_tokens != null && request.max_completion_tokens != null) {
    throw errors.invalidRequest(
      'Send either max_tokens or max_completion_tokens, not both (max_completion_tokens is the newer name).',
      'max_completion_tokens',
    );
  }
  for (const name of ['max_tokens', 'max_completion_tokens'] as const) {
    const value = request[name];
    if (value != null && !(Number.isInteger(value) && (value as number) >= 1)) {
      throw errors.invalidRequest(`${name}: must be a positive integer.`, name);
    }
  }
  const problem = checkMessages(request.messages);
  if (problem) throw problem;
  return request as ChatRequest;
}

function checkMessages(messages: unknown[]): GatewayError | undefined {
  /** Tool-call ids of the latest assistant turn still waiting for their tool results. */
  let awaiting: Set<string> | undefined;
  let awaitingFrom = -1;
  for (let index = 0; index < messages.length; index++) {
    const path = `messages[${index}]`;
    const raw = messages[index];
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
      return errors.invalidRequest(`${path}: must be an object with role and content.`, path);
    }
    const message = raw as ChatMessage;
    if (!roles.has(message.role)) {
      return errors.invalidRequest(
        `${path}.role: must be one of system, developer, user, assistant, tool.`,
        `${path}.role`,
      );
    }
    if (message.role === 'tool') {
      if (typeof message.tool_call_id !== 'string' || message.tool_call_id.length === 0) {
        return errors.invalidRequest(
          `${path}.tool_call_id: a tool message needs the id of the call it answers.`,
          `${path}.tool_call_id`,
        );
      }
      if (!awaiting?.has(message.tool_call_id)) {
        return errors.invalidRequest(
          `${path}.tool_call_id: '${message.tool_call_id}' does not match a tool call of the preceding assistant message.`,
          `${path}.tool_call_id`,
        );
      }
      awaiting.delete(message.tool_call_id);
    } else if (awaiting && awaiting.size > 0) {
      return errors.invalidRequest(
        `messages[${awaitingFrom}].tool_calls: every tool call needs a tool message with its tool_call_id before the next ${message.role} message (missing: ${[...awaiting].join(', ')}).`,
        `messages[${awaitingFrom}].tool_calls`,
      );
    }
    const contentProblem = checkContent(message, path);
    if (contentProblem) return contentProblem;
    if (message.role === 'assistant' && message.tool_calls !== undefined && message.tool_calls !== null) {
      const toolCallProblem = checkToolCalls(message.tool_calls, `${path}.tool_calls`);
      if (toolCallProblem) return toolCallProblem;
      awaiting = new Set(message.tool_calls.map((call) => call.id));
      awaitingFrom = index;
    } else if (message.role !== 'tool') {
      awaiting = undefined;
    }
  }
  if (awaiting && awaiting.size > 0) {
    return errors.invalidRequest(
      `messages[${awaitingFrom}].tool_calls: every tool call needs a tool message with its tool_call_id (missing: ${[...awaiting].join(', ')}).`,
      `messages[${awaitingFrom}].tool_calls`,
    );
  }
  return undefined;
}

function checkContent(message: ChatMessage, path: string): GatewayError | undefined {
  const content = message.content;
  if (content === undefined || content === null) {
    if (contentRequired.has(message.role)) {
      return errors.invalidRequest(
        `${path}.content: is required for a ${message.role} message.`,
        `${path}.content`,
      );
    }
    const hasToolCalls = Array.isArray(message.tool_calls) && message.tool_calls.length > 0;
    if (!hasToolCalls) {
      return errors.invalidRequest(
        `${path}.content: an assistant message needs content unless it has tool_calls.`,
        `${path}.content`,
      );
    }
    return undefined;
  }
  if (typeof content === 'string') return undefined;
  if (!Array.isArray(content)) {
    return errors.invalidRequest(
      `${path}.content: must be a string or a list of content parts.`,
      `${path}.content`,
    );
  }
  for (let part = 0; part < content.length; part++) {
    const item = content[part] as { type?: unknown } | null;
    if (item === null || typeof item !== 'object' || typeof item.type !== 'string') {
      return errors.invalidRequest(
        `${path}.content[${part}]: must be a content part with a type (text, image_url …).`,
        `${path}.content[${part}]`,
      );
    }
  }
  return undefined;
}

function checkToolCalls(toolCalls: unknown, path: string): GatewayError | undefined {
  if (!Array.isArray(toolCalls)) return errors.invalidRequest(`${path}: must be a list of tool calls.`, path);
  for (let index = 0; index < toolCalls.length; index++) {
    const call = toolCalls[index] as Record<string, unknown> | null;
    const at = `${path}[${index}]`;
    if (call === null || typeof call !== 'object')
      return errors.invalidRequest(`${at}: must be a tool call object.`, at);
    if (typeof call.id !== 'string' || call.id.length === 0)
      return errors.invalidRequest(`${at}.id: must be a non-empty string.`, `${at}.id`);
    if (call.type !== 'function')
      return errors.invalidRequest(`${at}.type: must be "function".`, `${at}.type`);
    const fn = call.function as Record<string, unknown> | null | undefined;
    if (!fn || typeof fn !== 'object' || typeof fn.name !== 'string' || fn.name.length === 0) {
      return errors.invalidRequest(`${at}.function.name: must be a non-empty string.`, `${at}.function.name`);
    }
    if (typeof fn.arguments !== 'string' || !isJson(fn.arguments)) {
      return errors.invalidRequest(
        `${at}.function.arguments: must be a string holding JSON (for example "{}").`,
        `${at}.function.arguments`,
      );
    }
  }
  return undefined;
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
