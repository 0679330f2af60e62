/** The identity admin API under /ui/api: organizations, teams, users (one shared shape) and keys. */

import Type from 'typebox';
import { auditContext } from '../../identity/admin-audit.ts';
import {
  KeyBody,
  OrganizationBody,
  PageQuery,
  SearchParam,
  TeamBody,
  UserBody,
} from '../../identity/admin-schemas.ts';
import type { App, AppDependencies } from '../app-types.ts';
import { adminSecurity, errorResponses } from '../schemas/common-schemas.ts';
import {
  CreatedKeyView,
  KeyView,
  keyView,
  ListView,
  OrganizationView,
  TeamView,
  UserView,
} from '../schemas/identity-views.ts';
import { spendTotalsOf } from '../schemas/spend-views.ts';
import { registerEntityRoutes } from './identity-entity-routes.ts';

export function registerIdentityRoutes(
  app: App,
  deps: Pick<AppDependencies, 'identityAdmin' | 'spend'>,
): void {
  const admin = deps.identityAdmin;
  const organizationSpend = spendTotalsOf(deps.spend, 'organization', 'organization_id');
  const teamSpend = spendTotalsOf(deps.spend, 'team', 'team_id');
  registerEntityRoutes(app, {
    path: '/ui/api/organizations',
    idName: 'org_id',
    noun: 'organization',
    body: OrganizationBody,
    view: OrganizationView,
    filters: ['organization_id'],
    upsert: (body: OrganizationBody, context) => admin.upsertOrganization(body, context),
    update: (id, body, context) => admin.updateOrganization(id, body, context),
    get: (id) => organizationSpend.one(admin.getOrganization(id)),
    list: (page, filters) =>
      organizationSpend.page(admin.listOrganizations(page, filters.organization_id, filters.search)),
    remove: (id, context) => admin.deleteOrganization(id, context),
  });
  registerEntityRoutes(app, {
    path: '/ui/api/teams',
    idName: 'team_id',
    noun: 'team',
    body: TeamBody,
    view: TeamView,
    filters: ['organization_id'],
    upsert: (body: TeamBody, context) => admin.upsertTeam(body, context),
    update: (id, body, context) => admin.updateTeam(id, body, context),
    get: (id) => teamSpend.one(admin.getTeam(id)),
    list: (page, filters) => teamSpend.page(admin.listTeams(page, filters.organization_id, filters.search)),
    remove: (id, context) => admin.deleteTeam(id, context),
  });
  registerEntityRoutes(app, {
    path: '/ui/api/users',
    idName: 'user_id',
    noun: 'user',
    body: UserBody,
    view: UserView,
    filters: ['team_id', 'organization_id'],
    upsert: (body: UserBody, context) => admin.upsertUser(body, context),
    update: (id, body, context) => admin.updateUser(id, body, context),
    get: (id) => admin.getUser(id),
    list: (page, filters) =>
      admin.listUsers(page, {
        teamId: filters.team_id,
        organizationId: filters.organization_id,
        search: filters.search,
      }),
    remove: (id, context) => admin.deleteUser(id, context),
  });
  registerKeyRoutes(app, admin, spendTotalsOf(deps.spend, 'key', 'key_id'));
}

function registerKeyRoutes(
  app: App,
  admin: AppDependencies['identityAdmin'],
  keySpend: ReturnType<typeof spendTotalsOf<'key_id'>>,
): void {
  const onRequest = app.authenticateAdmin;
  const common = { tags: ['admin'], security: adminSecurity };
  const params = Type.Object({ key_id: Type.String({ minLength: 1, maxLength: 128 }) });

  app.post(
    '/ui/api/keys',
    {
      onRequest,
      schema: {
        ...common,
        summary: 'Create an API key. The secret is in `key` of this answer only; store it now.',
        body: KeyBody,
        response: { 201: CreatedKeyView, ...errorResponses },
      },
    },
    async (request, reply) => {
      const { key, record } = await admin.createKey(
        request.body,
        auditContext(request.adminActor, request.id),
      );
      return reply.code(201).send({ key, ...keyView(record) });
    },
  );
  app.get(
    '/ui/api/keys',
    {
      onRequest,
      schema: {
        ...common,
        summary:
          'List API keys (never their secrets); `search` narrows them to those whose id, name, prefix, team or user contains it.',
        querystring: Type.Object({
          ...PageQuery.properties,
          user_id: Type.Optional(Type.String()),
          team_id: Type.Optional(Type.String()),
          organization_id: Type.Optional(Type.String()),
          search: SearchParam,
        }),
        response: { 200: ListView(KeyView), ...errorResponses },
      },
    },
    async (request) => {
      const { limit = 100, offset = 0, user_id, team_id, organization_id, search } = request.query;
      const page = await keySpend.page(
        admin.listKeys(
          { limit, offset },
          { userId: user_id, teamId: team_id, organizationId: organization_id, search },
        ),
      );
      return { object: 'list' as const, data: page.items.map(keyView), total: page.total, limit, offset };
    },
  );
  app.get(
    '/ui/api/keys/:key_id',
    {
      onRequest,
      schema: {
        ...common,
        summary: 'Get an API key (never its secret).',
        params,
        response: { 200: KeyView, ...errorResponses },
      },
    },
    async (request) => keyView(await keySpend.one(admin.getKey(request.params.key_id))),
  );
  app.put(
    '/ui/api/keys/:key_id',
    {
      onRequest,
      schema: {
        ...common,
        summary: 'Update an API key; omitted fields keep their value, null clears one.',
        params,
        body: KeyBody,
        response: { 200: KeyView, ...errorResponses },
      },
    },
    async (request) =>
      keyView(
        await admin.updateKey(
          request.params.key_id,
          request.body,
          auditContext(request.adminActor, request.id),
        ),
      ),
  );
  app.delete(
    '/ui/api/keys/:key_id',
    {
      onRequest,
      schema: {
        ...common,
        summary: 'Delete (revoke) an API key on every replica.',
        params,
        response: {
          200: Type.Object({ deleted: Type.Literal(true), key_id: Type.String() }),
          ...errorResponses,
        },
      },
    },
    async (request) => {
      await admin.deleteKey(request.params.key_id, auditContext(request.adminActor, request.id));
      return { deleted: true as const, key_id: request.params.key_id };
    },
  );
}
