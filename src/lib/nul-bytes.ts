/**
 * Finds NUL characters in decoded input. PostgreSQL text columns refuse them (a 500 for every admin
 * route that stored or filtered by one, issue 9), and no name, id or filter needs one.
 */

/** The path of the first string (or object key) holding a NUL character, e.g. `metadata.note`; else undefined. */
export function findNulByte(value: unknown, root = ''): string | undefined {
  const pending: Array<{ value: unknown; path: string }> = [{ value, path: root }];
  while (pending.length > 0) {
    const { value: current, path } = pending.pop()!;
    if (typeof current === 'string') {
      if (current.includes('\0')) return path;
      continue;
    }
    if (current === null || typeof current !== 'object') continue;
    if (Array.isArray(current)) {
      current.forEach((item, index) => {
        pending.push({ value: item, path: `${path}[${index}]` });
      });
      continue;
    }
    for (const [key, item] of Object.entries(current)) {
      const itemPath = path ? `${path}.${key}` : key;
      if (key.includes('\0')) return itemPath;
      pending.push({ value: item, path: itemPath });
    }
  }
  return undefined;
}
