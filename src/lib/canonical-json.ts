/**
 * Canonical JSON: object keys sorted at every depth and undefined members left out, so two values that
 * JSON treats as equal give the same text whatever order their keys were written in (the MCP call
 * fingerprint, the response-cache key). Built in one pass with string appends: it runs on the hot path.
 */
export function canonicalJson(value: unknown, omitTopLevel?: ReadonlySet<string>): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) {
    let text = '[';
    for (let index = 0; index < value.length; index++) {
      if (index > 0) text += ',';
      text += canonicalJson(value[index]);
    }
    return `${text}]`;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).sort();
  let text = '{';
  for (const key of keys) {
    const member = record[key];
    if (member === undefined || omitTopLevel?.has(key)) continue;
    if (text.length > 1) text += ',';
    text += `${JSON.stringify(key)}:${canonicalJson(member)}`;
  }
  return `${text}}`;
}
