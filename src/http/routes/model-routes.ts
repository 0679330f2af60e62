/** GET /v1/models and /v1/models/{model}: the runtime registry, filtered to what the caller may use. */
import Type, { type Static } from 'typebox';
import { type Caller, mayUseModel } from '../../canonical/caller.ts';
import { errors } from '../../lib/error-catalogue.ts';
import type { ModelGroup } from '../../routing/model-registry.ts';
import type { App, AppDependencies } from '../app-types.ts';
import { callerSecurity, errorResponses } from '../schemas/common-schemas.ts';

const ModelEntry = Type.Object({
  id: Type.String({ description: 'Public model name a client may request.' }),
  object: Type.Literal('model'),
  created: Type.Integer(),
  owned_by: Type.String(),
  mode: Type.String({ description: 'Which kind of endpoint serves it (model_info.mode): chat, embedding …' }),
});

export function registerModelRoutes(app: App, deps: Pick<AppDependencies, 'registry'>): void {
  const { registry } = deps;
  const entry = (group: ModelGroup) => ({
    id: group.name,
    object: 'model' as const,
    created: registry.createdAt,
    owned_by: group.ownedBy,
    mode: group.mode,
  });
  const visible = (caller: Caller) => registry.groups().filter((group) => mayUseModel(caller, group.name));
  const common = { tags: ['proxy'], security: callerSecurity };

  for (const prefix of ['/v1', '']) registerModelList(app, prefix, visible, entry, common);
  for (const prefix of ['/v1', '']) registerModelLookup(app, prefix, registry, entry, common);
}

type Entry = (group: ModelGroup) => Static<typeof ModelEntry>;
type Common = { tags: string[]; security: typeof callerSecurity };

/** GET <prefix>/models (LiteLLM serves it without /v1 too). */
function registerModelList(
  app: App,
  prefix: string,
  visible: (caller: Caller) => ModelGroup[],
  entry: Entry,
  common: Common,
): void {
  app.get(
    `${prefix}/models`,
    {
      onRequest: app.authenticateCaller,
      schema: {
        ...common,
        summary: 'List the models this API key may use.',
        response: {
          200: Type.Object({ object: Type.Literal('list'), data: Type.Array(ModelEntry) }),
          ...errorResponses,
        },
      },
    },
    async (request) => ({ object: 'list' as const, data: visible(request.caller).map(entry) }),
  );
}

/** GET <prefix>/models/{model}: a wildcard, because public model names may contain slashes (`openai/gpt-4o`). */
function registerModelLookup(
  app: App,
  prefix: string,
  registry: AppDependencies['registry'],
  entry: Entry,
  common: Common,
): void {
  app.get(
    `${prefix}/models/*`,
    {
      onRequest: app.authenticateCaller,
      schema: {
        ...common,
        summary: 'Get one model by its public name.',
        response: { 200: ModelEntry, ...errorResponses },
      },
    },
    async (request) => {
      // No params schema: TypeBox's converter cannot take a property named '*'.
      const name = decodeURIComponent((request.params as { '*': string })['*']);
      const group = registry.group(name);
      if (!group || !mayUseModel(request.caller, name)) throw errors.modelNotFound(name);
      return { ...entry(group), id: name }; // a name served by a wildcard group is shown as asked
    },
  );
}
