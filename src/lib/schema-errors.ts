/**
 * Turns JSON-schema validation errors into one precise message per problem, naming the path the way a
 * user writes it (`model_list[2].params.api_base`), describing what is expected, and suggesting the
 * closest known key for an unknown one.
 */
import { closestMatch } from './closest-match.ts';

export interface SchemaIssue {
  /** Dotted path with [index] for arrays, e.g. `model_list[2].params.api_base`; empty for the root. */
  path: string;
  message: string;
}

interface RawError {
  keyword: string;
  instancePath: string;
  message: string;
  params: Record<string, unknown>;
}

type Schema = Record<string, unknown>;

export function describeSchemaErrors(schema: unknown, errors: Iterable<RawError>): SchemaIssue[] {
  const list = [...errors];
  const anyOfPaths = new Set(
    list.filter((error) => error.keyword === 'anyOf').map((error) => error.instancePath),
  );
  const issues: SchemaIssue[] = [];
  const seen = new Set<string>();
  for (const error of list) {
    if (error.keyword === 'boolean') continue; // reported through additionalProperties
    const segments = splitPointer(error.instancePath);
    let issue: SchemaIssue;
    if (error.keyword === 'additionalProperties') {
      for (const key of (error.params.additionalProperties as string[] | undefined) ?? []) {
        const known = Object.keys((schemaAt(schema, segments)?.properties as Schema | undefined) ?? {});
        const suggestion = closestMatch(key, known);
        const hint = suggestion
          ? ` (did you mean '${suggestion}'?)`
          : known.length
            ? ` (known keys: ${known.join(', ')})`
            : '';
        push({ path: formatPath([...segments, key]), message: `unknown key${hint}` });
      }
      continue;
    }
    if (anyOfPaths.has(error.instancePath)) {
      if (error.keyword !== 'anyOf') continue;
      issue = { path: formatPath(segments), message: `must be ${describe(schemaAt(schema, segments))}` };
    } else if (error.keyword === 'required') {
      const missing = String(error.params.requiredProperties ?? error.params.missingProperty ?? '');
      for (const key of missing.split(',').filter(Boolean)) {
        push({ path: formatPath([...segments, key]), message: 'is required' });
      }
      continue;
    } else {
      issue = { path: formatPath(segments), message: messageFor(error, schemaAt(schema, segments)) };
    }
    push(issue);
  }
  return issues;

  function push(issue: SchemaIssue): void {
    const key = `${issue.path}\u0000${issue.message}`;
    if (seen.has(key)) return;
    seen.add(key);
    issues.push(issue);
  }
}

export function formatIssue(issue: SchemaIssue): string {
  return issue.path ? `${issue.path}: ${issue.message}` : issue.message;
}

export function formatPath(segments: ReadonlyArray<string | number>): string {
  let path = '';
  for (const segment of segments) {
    if (typeof segment === 'number' || /^\d+$/.test(segment)) path += `[${segment}]`;
    else path += path ? `.${segment}` : segment;
  }
  return path;
}

function splitPointer(pointer: string): string[] {
  if (!pointer) return [];
  return pointer
    .slice(1)
    .split('/')
    .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'));
}

function schemaAt(schema: unknown, segments: string[]): Schema | undefined {
  let current = schema as Schema | undefined;
  for (const segment of segments) {
    if (!current) return undefined;
    const options = (current.anyOf as Schema[] | undefined) ?? [current];
    let next: Schema | undefined;
    for (const option of options) {
      if (/^\d+$/.test(segment) && option.items) next = option.items as Schema;
      else if ((option.properties as Schema | undefined)?.[segment])
        next = (option.properties as Schema)[segment] as Schema;
      else if (option.patternProperties)
        next = Object.values(option.patternProperties as Schema)[0] as Schema;
      else if (typeof option.additionalProperties === 'object') next = option.additionalProperties as Schema;
      if (next) break;
    }
    current = next;
  }
  return current;
}

function messageFor(error: RawError, schema: Schema | undefined): string {
  switch (error.keyword) {
    case 'type':
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
    case 'enum':
    case 'const':
      return `must be ${describe(schema)}`;
    case 'format':
      return error.params.format === 'uri'
        ? 'must be a URL'
        : `must be a valid ${String(error.params.format)}`;
    case 'minLength':
      return schema?.minLength === 1
        ? 'must not be empty'
        : `must have at least ${String(schema?.minLength)} characters`;
    case 'maxLength':
      return `must have at most ${String(schema?.maxLength)} characters`;
    case 'minItems':
      return `must have at least ${String(schema?.minItems)} items`;
    case 'maxItems':
      return `must have at most ${String(schema?.maxItems)} items`;
    case 'maxProperties':
      return `must have at most ${String(schema?.maxProperties)} entries`;
    case 'pattern':
      return (schema?.description as string | undefined) ?? `must match ${String(schema?.pattern)}`;
    default:
      return error.message;
  }
}

/** Plain-words description of what a schema accepts: "an integer from 1 to 10 or null". */
export function describe(schema: Schema | undefined): string {
  if (!schema) return 'valid';
  if (Array.isArray(schema.anyOf)) return (schema.anyOf as Schema[]).map(describe).join(' or ');
  if (Array.isArray(schema.enum))
    return `one of ${(schema.enum as unknown[]).map((value) => JSON.stringify(value)).join(', ')}`;
  if ('const' in schema) return JSON.stringify(schema.const);
  switch (schema.type) {
    case 'integer':
    case 'number': {
      const noun = schema.type === 'integer' ? 'an integer' : 'a number';
      const min =
        schema.minimum ??
        (schema.exclusiveMinimum !== undefined ? `> ${String(schema.exclusiveMinimum)}` : undefined);
      const max = schema.maximum;
      if (typeof min === 'number' && typeof max === 'number') return `${noun} from ${min} to ${max}`;
      if (typeof min === 'number') return `${noun} ≥ ${min}`;
      if (typeof min === 'string') return `${noun} ${min}`;
      if (typeof max === 'number') return `${noun} ≤ ${max}`;
      return noun;
    }
    case 'string':
      return schema.format === 'uri' ? 'a URL' : 'a string';
    case 'boolean':
      return 'true or false';
    case 'null':
      return 'null';
    case 'array':
      return 'a list';
    case 'object':
      return 'an object';
    default:
      return 'valid';
  }
}
