/**
 * The canonical chat request is the chat-completions request itself: every wire format is translated to
 * it, and unknown fields are kept so that OpenAI-compatible upstreams receive what the caller sent.
 */
export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type ContentPart =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string; detail?: string } }
  | { type: string; [key: string]: unknown };

export interface ChatMessage {
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool';
  content?: string | ContentPart[] | null;
  name?: string;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  [key: string]: unknown;
}

export interface FunctionTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean };
}

/**
 * The caller's body in a provider's native format, kept on the canonical request under a symbol (so
 * spreads keep it and JSON never shows it): an adapter that speaks that format sends it as it came
 * (Anthropic Messages to an Anthropic deployment); every other adapter uses the canonical fields.
 */
export const nativeBody: unique symbol = Symbol.for('switchboard.nativeBody');

export interface NativeBody {
  format: 'anthropic-messages';
  body: Readonly<Record<string, unknown>>;
}

export interface ChatRequest {
  [nativeBody]?: NativeBody;
  model: string;
  messages: ChatMessage[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean; [key: string]: unknown } | null;
  max_tokens?: number | null;
  max_completion_tokens?: number | null;
  tools?: Array<FunctionTool | { type: string; [key: string]: unknown }>;
  tool_choice?: unknown;
  [key: string]: unknown;
}
