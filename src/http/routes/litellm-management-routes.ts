/**
 * LiteLLM's most used management endpoints, as aliases of the admin API for clients and scripts
 * migrating from LiteLLM (issue 10; docs/migrating-from-litellm.md): /key/generate, /key/info,
 * /key/update, /key/delete, /team/new, /user/new and /model/info. Fields are LiteLLM's where they map
 * (`key_alias` → `key_name`, `user_email` → `email`, `user_role`; `max_budget`, `soft_budget` and
 * `budget_duration` are the same on both); the rest of the body must be the admin API's own fields, so
 * an unsupported LiteLLM field (`tags` …) is a 400 naming it. Same
 * authentication as /ui/api; organization administrators use /ui/api (these aliases are proxy-wide).
 */
import Type from 'typebox';
import { auditContext } from '../../identity/admin-audit.ts';
import { KeyBody, TeamBody, UserBody } from '../../identity/admin-schemas.ts';
import { errors } from '../../lib/error-catalogue.ts';
import type { App, AppDependencies } from '../app-types.ts';
import { adminSecurity, errorResponses } from '../schemas/common-schemas.ts';
import { keyView } from '../schemas/identity-views.ts';
import { validatorCompiler } from '../validator-compiler.ts';

const common = { tags: ['litellm'], security: adminSecurity };
const Open = Type.Object({}, { additionalProperties: true });
const SecretQuery = Type.Object({ key: Type.String({ minLength: 1, maxLength: 512 }) });

/** LiteLLM's names for fields the admin API calls otherwise. */
function renamed(body: Record<string, unknown>, names: Record<string, string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) out[names[key] ?? key] = value;
  return out;
}

const LITELLM_ROLES: Record<string, string> = {
  proxy_admin: 'proxy_admin',
  proxy_admin_viewer: 'member',
  internal_user: 'member',
  internal_user_viewer: 'member',
  org_admin: 'org_admin',
};

export function registerLiteLlmManagementRoutes(
  app: App,
  deps: Pick<AppDependencies, 'identityAdmin' | 'registry'>,
): void {
  const admin = deps.identityAdmin;
  const onRequest = app.authenticateAdmin;
  // The admin API's own body schemas, compiled once, check the translated bodies (400 naming a field).
  const checkers = new Map(
    [KeyBody, TeamBody, UserBody].map((schema) => [
      schema,
      validatorCompiler({ schema, method: 'POST', url: '/ui/api/litellm-alias', httpPart: 'body' }),
    ]),
  );
  const validate = (
    schema: typeof KeyBody | typeof TeamBody | typeof UserBody,
    body: Record<string, unknown>,
  ) => {
    const result = checkers.get(schema)!(body) as { value?: unknown; error?: Error };
    if (result.error) throw result.error;
    return result.value;
  };

  app.post(
    '/key/generate',
    {
      onRequest,
      schema: {
        ...common,
        summary: 'LiteLLM alias of POST /ui/api/keys.',
        body: Open,
        response: { 200: Open, ...errorResponses },
      },
    },
    async (request, reply) => {
      const body = validate(
        KeyBody,
        renamed(request.body as Record<string, unknown>, { key_alias: 'key_name' }),
      ) as KeyBody;
      const { key, record } = await admin.createKey(body, auditContext(request.adminActor, request.id));
      const view = keyView(record);
      return reply.send({ key, key_alias: record.key_name, expires: view.expires_at, ...view });
    },
  );
  app.get(
    '/key/info',
    {
      onRequest,
      schema: {
        ...common,
        summary: 'LiteLLM alias: a key by its secret (?key=).',
        querystring: SecretQuery,
        response: { 200: Open, ...errorResponses },
      },
    },
    async (request) => {
      const { key } = request.query as { key: string };
      return { key: `${key.slice(0, 6)}…`, info: keyView(await admin.getKeyBySecret(key)) };
    },
  );
  app.post(
    '/key/update',
    {
      onRequest,
      schema: {
        ...common,
        summary: 'LiteLLM alias: update a key named by its secret (`key`).',
        body: Open,
        response: { 200: Open, ...errorResponses },
      },
    },
    async (request) => {
      const { key, ...rest } = request.body as Record<string, unknown>;
      if (typeof key !== 'string')
        throw errors.invalidRequest('key: must be the secret of the key to update.', 'key');
      const record = await admin.getKeyBySecret(key);
      const body = validate(KeyBody, renamed(rest, { key_alias: 'key_name' })) as KeyBody;
      return keyView(
        await admin.updateKey(record.key_id, body, auditContext(request.adminActor, request.id)),
      );
    },
  );
  app.post(
    '/key/delete',
    {
      onRequest,
      schema: {
        ...common,
        summary: 'LiteLLM alias: delete keys named by their secrets (`keys`).',
        body: Type.Object({
          keys: Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: 100 }),
        }),
        response: { 200: Open, ...errorResponses },
      },
    },
    async (request) => {
      const { keys } = request.body as { keys: string[] };
      const records = await Promise.all(keys.map((secret) => admin.getKeyBySecret(secret)));
      const context = auditContext(request.adminActor, request.id);
      for (const record of records) await admin.deleteKey(record.key_id, context);
      return { deleted_keys: records.map((record) => record.key_id) };
    },
  );
  app.post(
    '/team/new',
    {
      onRequest,
      schema: {
        ...common,
        summary: 'LiteLLM alias of POST /ui/api/teams.',
        body: Open,
        response: { 200: Open, ...errorResponses },
      },
    },
    async (request) => {
      const body = validate(TeamBody, request.body as Record<string, unknown>) as TeamBody;
      return (await admin.upsertTeam(body, auditContext(request.adminActor, request.id))).record;
    },
  );
  app.post(
    '/user/new',
    {
      onRequest,
      schema: {
        ...common,
        summary: 'LiteLLM alias: create a user and, as LiteLLM does, a key for them.',
        body: Open,
        response: { 200: Open, ...errorResponses },
      },
    },
    async (request) => {
      const { user_role, ...rest } = request.body as Record<string, unknown>;
      const fields = renamed(rest, { user_email: 'email' });
      if (user_role !== undefined) {
        const role = LITELLM_ROLES[String(user_role)];
        if (!role)
          throw errors.invalidRequest(
            `user_role: must be one of ${Object.keys(LITELLM_ROLES).join(', ')}.`,
            'user_role',
          );
        fields.role = role;
      }
      const body = validate(UserBody, fields) as UserBody;
      const context = auditContext(request.adminActor, request.id);
      await admin.requireKeyRecipient(body.user_id, body.role, context);
      const { record: user } = await admin.upsertUser(body, context);
      const { key } = await admin.createKey({ user_id: user.user_id }, context);
      return { ...user, key };
    },
  );
  app.get(
    '/model/info',
    {
      onRequest,
      schema: {
        ...common,
        summary: 'LiteLLM alias: the deployments (never their keys or addresses).',
        response: { 200: Open, ...errorResponses },
      },
    },
    async () => ({
      data: deps.registry.groups().flatMap((group) =>
        group.deployments.map((deployment) => ({
          model_name: group.name,
          litellm_params: { model: `${deployment.config.params.provider}/${deployment.config.params.model}` },
          model_info: { id: deployment.id, mode: group.mode },
        })),
      ),
    }),
  );
}
