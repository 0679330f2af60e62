/**
 * LiteLLM's `os.environ/NAME` references: any string value of the file may name an environment
 * variable (or an entry of the file's `environment_variables`), resolved at load.
 */
const ENV_PREFIX = 'os.environ/';

/** `environment_variables` of a LiteLLM file, usable by os.environ/ references. */
export function stringValues(value: unknown): Record<string, string> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return {};
  return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, String(item)]));
}

/** Replaces every `os.environ/NAME` string with the variable's value; a missing one is an issue. */
export function resolveEnvReferences(
  value: unknown,
  env: Readonly<Record<string, string | undefined>>,
  path: string,
  issues: string[],
): unknown {
  if (typeof value === 'string') {
    if (!value.startsWith(ENV_PREFIX)) return value;
    const name = value.slice(ENV_PREFIX.length);
    const resolved = env[name];
    if (resolved === undefined || resolved === '') {
      issues.push(`${path}: environment variable ${name} is not set`);
      return value;
    }
    return resolved;
  }
  if (Array.isArray(value)) {
    return value.map((item, index) => resolveEnvReferences(item, env, `${path}[${index}]`, issues));
  }
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      out[key] = resolveEnvReferences(item, env, path ? `${path}.${key}` : key, issues);
    }
    return out;
  }
  return value;
}
