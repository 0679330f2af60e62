/**
 * Admin routes for organizations, teams and users, which share one shape: POST upserts by id, PUT
 * updates (an omitted field keeps its value, null clears it), GET one, GET a page, DELETE.
 */
import type { TSchema } from 'typebox';
import Type from 'typebox';
import { type AuditContext, auditContext } from '../../identity/admin-audit.ts';
import { PageQuery, SearchParam } from '../../identity/admin-schemas.ts';
import type { Page, PageRequest } from '../../store/db/repositories/limit-columns.ts';
import type { App } from '../app-types.ts';
import { adminSecurity, errorResponses, IdParam } from '../schemas/common-schemas.ts';
import { DeletedView, ListView, timestampedView } from '../schemas/identity-views.ts';

export interface EntityRoutes<Body, Stored extends { created_at: number; updated_at: number }> {
  /** Collection path, e.g. `/ui/api/teams`. */
  path: string;
  /** Name of the id in the path, e.g. `team_id`. */
  idName: string;
  noun: string;
  body: TSchema;
  /** Schema of one record as the API shows it. */
  view: TSchema;
  /** Extra list filters accepted as query parameters (`search` is accepted by every list). */
  filters: readonly string[];
  upsert(body: Body, context: AuditContext): Promise<{ record: Stored; created: boolean }>;
  update(id: string, body: Body, context: AuditContext): Promise<Stored>;
  get(id: string): Promise<Stored>;
  list(page: PageRequest, filters: { [name: string]: string | undefined }): Promise<Page<Stored>>;
  remove(id: string, context: AuditContext): Promise<void>;
}

/** The view schema is generic here, so responses are typed loosely and handlers return `unknown`. */
type Responses = Record<number, TSchema>;
type Params = { [name: string]: string };

export function registerEntityRoutes<Body, Stored extends { created_at: number; updated_at: number }>(
  app: App,
  entity: EntityRoutes<Body, Stored>,
): void {
  const one = `${entity.path}/:${entity.idName}`;
  const idOf = (params: unknown) => (params as Params)[entity.idName]!;
  const schema = (summary: string, extra: object, responses: Responses) => ({
    tags: ['admin'],
    security: adminSecurity,
    summary,
    ...extra,
    response: { ...responses, ...errorResponses } as Responses,
  });
  const onRequest = app.authenticateAdmin;
  const params = IdParam(entity.idName);
  const query = Type.Object({
    ...PageQuery.properties,
    search: SearchParam,
    ...Object.fromEntries(entity.filters.map((name) => [name, Type.Optional(Type.String())])),
  });

  app.post(
    entity.path,
    {
      onRequest,
      schema: schema(
        `Create a ${entity.noun}, or update it when its id names an existing one.`,
        { body: entity.body },
        { 200: entity.view, 201: entity.view },
      ),
    },
    async (request, reply) => {
      const { record, created } = await entity.upsert(
        request.body as Body,
        auditContext(request.adminActor, request.id),
      );
      return reply.code(created ? 201 : 200).send(timestampedView(record));
    },
  );

  app.put(
    one,
    {
      onRequest,
      schema: schema(
        `Update a ${entity.noun}; omitted fields keep their value, null clears one.`,
        { params, body: entity.body },
        { 200: entity.view },
      ),
    },
    async (request) =>
      timestampedView(
        await entity.update(
          idOf(request.params),
          request.body as Body,
          auditContext(request.adminActor, request.id),
        ),
      ),
  );

  app.get(
    one,
    { onRequest, schema: schema(`Get a ${entity.noun}.`, { params }, { 200: entity.view }) },
    async (request) => timestampedView(await entity.get(idOf(request.params))),
  );

  app.get(
    entity.path,
    {
      onRequest,
      schema: schema(
        `List ${entity.noun}s, oldest first; \`search\` narrows them to those whose id or name contains it.`,
        { querystring: query },
        { 200: ListView(entity.view) },
      ),
    },
    async (request) => {
      const { limit = 100, offset = 0, ...filters } = request.query as { limit?: number; offset?: number };
      const page = await entity.list({ limit, offset }, filters as { [name: string]: string | undefined });
      return { object: 'list', data: page.items.map(timestampedView), total: page.total, limit, offset };
    },
  );

  app.delete(
    one,
    {
      onRequest,
      schema: schema(`Delete a ${entity.noun}.`, { params }, { 200: DeletedView(entity.idName) }),
    },
    async (request) => {
      const id = idOf(request.params);
      await entity.remove(id, auditContext(request.adminActor, request.id));
      return { deleted: true, [entity.idName]: id };
    },
  );
}
