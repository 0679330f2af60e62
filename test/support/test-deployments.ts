/** Deployments and model groups for routing tests, backed by any ProviderAdapter. */
import type { ProviderAdapter } from '../../src/providers/provider-adapter.ts';
import type { Deployment, ModelGroup } from '../../src/routing/model-registry.ts';

const idleAdapter: ProviderAdapter = {
  chat: {
    complete: () => Promise.reject(new Error('not used')),
    stream: () => {
      throw new Error('not used');
    },
  },
  close: async () => {},
};

export function testDeployment(
  id: string,
  options: {
    weight?: number;
    rpmLimit?: number;
    tpmLimit?: number;
    maxInputTokens?: number;
    adapter?: ProviderAdapter;
    modelName?: string;
  } = {},
): Deployment {
  const modelName = options.modelName ?? 'group';
  return {
    id,
    modelName,
    adapter: options.adapter ?? idleAdapter,
    weight: options.weight ?? 1,
    rpmLimit: options.rpmLimit,
    tpmLimit: options.tpmLimit,
    maxInputTokens: options.maxInputTokens,
    config: {
      model_name: modelName,
      params: { provider: 'test', model: `${id}-upstream` },
      model_info: { id },
    },
  };
}

export function testGroup(name: string, deployments: Deployment[]): ModelGroup {
  return { name, ownedBy: 'test', mode: 'chat', deployments };
}
