/**
 * The redaction rule of the audit log (docs/audit.md): a property whose name says it holds a secret
 * (a hash, token, secret, password, salt, credential, private or API key, a sealed value, an MCP
 * auth_config) is stored as "REDACTED" at any depth, metadata included; null stays null, so the log
 * still shows that a secret was set or cleared without holding it.
 */

export const REDACTED = 'REDACTED';

const SECRET_NAME =
  /(^|[_-])(secret|token|password|passwd|salt|hash|authorization|credentials?|api[_-]?key|private[_-]?key)s?([_-]|$)|sealed|^auth_config$/i;

export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

/** A deep copy of `value` with every secret-named property replaced by "REDACTED". */
export function redactSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactSecrets);
  if (value === null || typeof value !== 'object') return value;
  const copy: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(value)) {
    copy[name] =
      field !== null && field !== undefined && isSecretName(name) ? REDACTED : redactSecrets(field);
  }
  return copy;
}
