/**
 * Validates tools/call arguments against the tool's inputSchema with the MCP SDK's JSON-schema
 * validator. Compiled validators are kept per schema text, so a schema compiles once, not per call.
 * A schema the validator cannot compile is not enforced here (the upstream still validates).
 */
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { JsonSchemaType, JsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';

const MAX_CACHED = 2_000;

export class ArgumentValidator {
  private readonly provider = new AjvJsonSchemaValidator();
  private readonly validators = new Map<string, JsonSchemaValidator<unknown> | null>();

  /** Undefined when the arguments are valid; otherwise a message naming what is wrong. */
  problem(schema: Readonly<Record<string, unknown>>, args: unknown): string | undefined {
    const validator = this.validatorFor(schema);
    if (!validator) return undefined;
    const result = validator(args);
    return result.valid ? undefined : result.errorMessage;
  }

  private validatorFor(schema: Readonly<Record<string, unknown>>): JsonSchemaValidator<unknown> | null {
    const text = JSON.stringify(schema);
    let validator = this.validators.get(text);
    if (validator === undefined) {
      try {
        validator = this.provider.getValidator<unknown>(schema as JsonSchemaType);
      } catch {
        validator = null;
      }
      if (this.validators.size >= MAX_CACHED) this.validators.clear();
      this.validators.set(text, validator);
    }
    return validator;
  }
}
