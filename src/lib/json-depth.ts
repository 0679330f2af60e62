/**
 * Nesting bounds for JSON from outside. Parsing deep input is safe in V8, but serializing or walking it
 * recursively overflows the stack: a 10 KB body nested 5,000 levels deep once took a model offline for
 * every tenant. Both checks are iterative and linear, and stop at the first level past the bound.
 */

/** The deepest nesting of arrays and objects a request body may have; no real request comes close. */
export const MAX_JSON_DEPTH = 64;

/** True when the JSON text nests arrays/objects deeper than `max` (brackets inside strings are skipped). */
export function jsonTextTooDeep(text: string, max: number = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === 92)
        index++; // backslash: skip the escaped character
      else if (code === 34) inString = false;
    } else if (code === 34) {
      inString = true;
    } else if (code === 91 || code === 123) {
      if (++depth > max) return true;
    } else if (code === 93 || code === 125) {
      depth--;
    }
  }
  return false;
}

/** True when a parsed value nests arrays/objects deeper than `max` (a scalar has depth 0). */
export function jsonValueTooDeep(value: unknown, max: number = MAX_JSON_DEPTH): boolean {
  const pending: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  while (pending.length > 0) {
    const { value: current, depth } = pending.pop()!;
    if (current === null || typeof current !== 'object') continue;
    if (depth + 1 > max) return true;
    const children = Array.isArray(current) ? current : Object.values(current);
    for (const child of children) {
      if (child !== null && typeof child === 'object') pending.push({ value: child, depth: depth + 1 });
    }
  }
  return false;
}
