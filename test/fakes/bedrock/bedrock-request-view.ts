/** Reads a Converse request the fake Bedrock received in the suite's provider-neutral terms. */
import type {
  NativePart,
  NativeRequestView,
  RecordedNativeRequest,
} from '../../support/translating-adapter-suite.ts';

export function bedrockRequestView(seen: RecordedNativeRequest): NativeRequestView {
  const body = seen.body;
  const parts: NativePart[] = [];
  for (const message of body.messages ?? []) {
    for (const block of message.content ?? []) parts.push(partOf(message.role, block));
  }
  const tools: any[] = body.toolConfig?.tools ?? [];
  const forced = body.toolConfig?.toolChoice?.tool?.name;
  return {
    system: body.system?.map((block: any) => block.text).join('\n'),
    parts,
    tools: tools.map((tool) => tool.toolSpec.name),
    maxTokens: body.inferenceConfig?.maxTokens,
    temperature: body.inferenceConfig?.temperature,
    stop: body.inferenceConfig?.stopSequences,
    jsonSchema: tools.find((tool) => tool.toolSpec.name === forced && forced === 'json_output')?.toolSpec
      .inputSchema.json,
  };
}

function partOf(role: 'user' | 'assistant', block: any): NativePart {
  if (block.toolUse)
    return {
      role,
      toolCall: { id: block.toolUse.toolUseId, name: block.toolUse.name, arguments: block.toolUse.input },
    };
  if (block.toolResult) {
    const content = block.toolResult.content
      .map((item: any) => item.text ?? JSON.stringify(item.json))
      .join('');
    return { role, toolResult: { id: block.toolResult.toolUseId, content } };
  }
  if (block.image) return { role, text: `[image ${block.image.format}]` };
  return { role, text: block.text };
}
