/**
 * Canonical chat messages → Anthropic's `system` text and alternating `user`/`assistant` turns of content
 * blocks: tool calls become `tool_use` blocks, tool answers `tool_result` blocks in a user turn, and
 * consecutive turns of one role are merged (the Messages API wants the roles to alternate).
 */
import type { ChatMessage, ContentPart } from '../../canonical/chat-request.ts';

export type ContentBlock = Record<string, unknown> & { type: string };

export interface MessagesTurn {
  role: 'user' | 'assistant';
  content: ContentBlock[];
}

export interface Conversation {
  /** System and developer messages joined by a blank line; undefined when there are none. */
  system: string | undefined;
  turns: MessagesTurn[];
}

export function toConversation(messages: readonly ChatMessage[]): Conversation {
  const system: string[] = [];
  const turns: MessagesTurn[] = [];
  for (const message of messages) {
    if (message.role === 'system' || message.role === 'developer') {
      const text = textOf(message.content);
      if (text) system.push(text);
      continue;
    }
    const role = message.role === 'assistant' ? 'assistant' : 'user';
    const blocks = blocksOf(message);
    if (blocks.length === 0) continue;
    const last = turns.at(-1);
    if (last?.role === role) last.content.push(...blocks);
    else turns.push({ role, content: blocks });
  }
  return { system: system.length > 0 ? system.join('\n\n') : undefined, turns };
}

function blocksOf(message: ChatMessage): ContentBlock[] {
  if (message.role === 'tool') {
    const text = textOf(message.content);
    const result: ContentBlock = { type: 'tool_result', tool_use_id: String(message.tool_call_id ?? '') };
    if (text) result.content = text;
    return [result];
  }
  const blocks = contentBlocks(message.content);
  if (message.role === 'assistant') {
    for (const call of message.tool_calls ?? []) {
      blocks.push({
        type: 'tool_use',
        id: call.id,
        name: call.function.name,
        input: parseArguments(call.function.arguments),
      });
    }
  }
  return blocks;
}

/**
 * The arguments of an earlier tool call as an object. Arguments that are not a JSON object (the model
 * wrote broken JSON, and the caller sent it back) become `{}`: Anthropic accepts only an object here.
 */
function parseArguments(text: string | undefined): Record<string, unknown> {
  if (!text) return {};
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

/** The text of a message's content: a string, or its text parts joined. */
function textOf(content: ChatMessage['content']): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter(
      (part): part is { type: 'text'; text: string } => part.type === 'text' && typeof part.text === 'string',
    )
    .map((part) => part.text)
    .join('');
}

/** Text and image parts as content blocks; empty text is left out (Anthropic refuses empty text blocks). */
function contentBlocks(content: ChatMessage['content']): ContentBlock[] {
  if (typeof content === 'string') return content ? [{ type: 'text', text: content }] : [];
  if (!Array.isArray(content)) return [];
  const blocks: ContentBlock[] = [];
  for (const part of content) {
    const block = partBlock(part);
    if (block) blocks.push(block);
  }
  return blocks;
}

function partBlock(part: ContentPart): ContentBlock | undefined {
  let block: ContentBlock | undefined;
  if (part.type === 'text' && typeof part.text === 'string' && part.text) {
    block = { type: 'text', text: part.text };
  } else if (part.type === 'image_url') {
    const url = (part.image_url as { url?: unknown } | undefined)?.url;
    const source = typeof url === 'string' ? imageSource(url) : undefined;
    if (source) block = { type: 'image', source };
  }
  // Prompt caching marks, as LiteLLM passes them on content parts.
  const cacheControl = (part as Record<string, unknown>).cache_control;
  if (block && cacheControl !== undefined) block.cache_control = cacheControl;
  return block;
}

/** A `data:` URL becomes a base64 source, an http(s) URL a url source; anything else is left out. */
function imageSource(url: string): Record<string, string> | undefined {
  const data = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (data) return { type: 'base64', media_type: data[1]!, data: data[2]! };
  if (/^https?:\/\//i.test(url)) return { type: 'url', url };
  return undefined;
}
