/** Reads a request the fake Gemini upstream recorded in the translating suite's provider-neutral terms. */
import type {
  NativePart,
  NativeRequestView,
  RecordedNativeRequest,
} from '../../support/translating-adapter-suite.ts';

export function geminiRequestView(seen: RecordedNativeRequest): NativeRequestView {
  const body = seen.body;
  const parts: NativePart[] = [];
  for (const content of body.contents ?? []) {
    const role = content.role === 'model' ? 'assistant' : 'user';
    for (const part of content.parts ?? []) {
      if (typeof part.text === 'string') parts.push({ role, text: part.text });
      else if (part.functionCall)
        parts.push({ role, toolCall: { name: part.functionCall.name, arguments: part.functionCall.args } });
      else if (part.functionResponse) {
        const content = part.functionResponse.response?.content;
        parts.push({
          role,
          toolResult: {
            name: part.functionResponse.name,
            content: typeof content === 'string' ? content : JSON.stringify(content),
          },
        });
      }
    }
  }
  const config = body.generationConfig ?? {};
  return {
    system: body.systemInstruction?.parts?.map((part: { text: string }) => part.text).join('\n'),
    parts,
    tools: (body.tools ?? []).flatMap((tool: any) => tool.functionDeclarations.map((fn: any) => fn.name)),
    maxTokens: config.maxOutputTokens,
    temperature: config.temperature,
    stop: config.stopSequences,
    jsonSchema: config.responseJsonSchema,
  };
}
