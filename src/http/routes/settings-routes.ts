/**
 * GET /ui/api/settings: the effective runtime settings operators need (never a secret), with where
 * each tier-policy mode came from and whether tier policies are enforced. PATCH /ui/api/settings:
 * accepts only settings that can change at runtime, none today, so any change is refused by name
 * (409 restart_required; 400 for an unknown, secret or invalid one) and the running configuration
 * stays exactly as it was (config/runtime-settings.ts).
 */
import Type from 'typebox';
import { RUNTIME_CHANGEABLE, settingsPatchError, settingsView } from '../../config/runtime-settings.ts';
import type { App, AppDependencies } from '../app-types.ts';
import { adminSecurity, errorResponses } from '../schemas/common-schemas.ts';

const Settings = Type.Record(Type.String(), Type.Unknown());

const SettingsView = Type.Object({
  object: Type.Literal('settings'),
  general_settings: Settings,
  router_settings: Settings,
  sources: Type.Object({
    tier_policy_mode: Type.String(),
    tier_policy_missing_service_mode: Type.String(),
  }),
  tier_policies: Type.Object({
    enforcing: Type.Boolean({
      description: 'true only with tier_policy_mode enforce and tier_policy_missing_service_mode fail_closed',
    }),
    stored: Type.Integer({ description: 'tier policies in this replica’s view' }),
  }),
  runtime_changeable: Type.Array(Type.String()),
  database: Type.String({ description: 'postgres or sqlite (the URL is never shown)' }),
  shared_store: Type.String({ description: 'redis or memory (the URL is never shown)' }),
});

const SettingsPatch = Type.Object(
  {
    general_settings: Type.Optional(Settings),
    router_settings: Type.Optional(Settings),
  },
  { additionalProperties: false },
);

export function registerSettingsRoutes(
  app: App,
  deps: Pick<AppDependencies, 'config' | 'tierPolicies' | 'settingsBackends'>,
): void {
  const view = () => ({
    object: 'settings' as const,
    ...settingsView(deps.config),
    runtime_changeable: [...RUNTIME_CHANGEABLE],
    tier_policies: { enforcing: deps.tierPolicies.enforcing, stored: deps.tierPolicies.size },
    ...deps.settingsBackends,
  });
  const schema = <Extra extends object>(summary: string, extra: Extra) => ({
    tags: ['admin'],
    security: adminSecurity,
    summary,
    ...extra,
    response: { 200: SettingsView, 409: errorResponses[400], ...errorResponses },
  });

  app.get(
    '/ui/api/settings',
    { onRequest: app.authenticateAdmin, schema: schema('The effective runtime settings (no secrets).', {}) },
    async () => view(),
  );

  app.patch(
    '/ui/api/settings',
    {
      onRequest: app.authenticateAdmin,
      schema: schema(
        'Change runtime settings. None can change at runtime yet: a change is refused by name (409 restart_required) and nothing changes.',
        { body: SettingsPatch },
      ),
    },
    async (request) => {
      const problem = settingsPatchError(deps.config, request.body as Record<string, unknown>);
      if (problem) throw problem;
      return view();
    },
  );
}
