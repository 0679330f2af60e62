/**
 * Function names offered to a model must match `^[a-zA-Z0-9_-]{1,64}$`, while MCP tools are named
 * `server_key.tool_name` (any characters, any length). Each MCP tool gets a safe alias, unique among
 * the request's tools, and the alias maps back to the namespaced name when the model calls it.
 */
import { createHash } from 'node:crypto';

const MAX_LENGTH = 64;

export interface ToolAliases {
  aliasOf(name: string): string;
  /** The namespaced MCP tool name of an alias; undefined for any other function name. */
  nameOf(alias: string): string | undefined;
}

/** `taken` holds function names the request already uses (the caller's own tools). */
export function createToolAliases(names: readonly string[], taken: Iterable<string> = []): ToolAliases {
  const used = new Set(taken);
  const byName = new Map<string, string>();
  const byAlias = new Map<string, string>();
  for (const name of names) {
    if (byName.has(name)) continue;
    const readable = name.replaceAll('.', '__').replaceAll(/[^a-zA-Z0-9_-]/g, '_');
    let alias = readable.length <= MAX_LENGTH && readable.length > 0 ? readable : withHash(readable, name, 0);
    for (let attempt = 0; used.has(alias); attempt++) alias = withHash(readable, name, attempt);
    used.add(alias);
    byName.set(name, alias);
    byAlias.set(alias, name);
  }
  return {
    aliasOf: (name) => {
      const alias = byName.get(name);
      if (alias === undefined) throw new Error(`no alias for ${name}`);
      return alias;
    },
    nameOf: (alias) => byAlias.get(alias),
  };
}

function withHash(readable: string, name: string, attempt: number): string {
  const hash = createHash('sha256').update(`${attempt}:${name}`).digest('hex').slice(0, 8);
  return `${readable.slice(0, MAX_LENGTH - hash.length - 1)}_${hash}`;
}
