/**
 * Route validation with TypeBox's compiler. Bodies are checked strictly (no type coercion: "5" is not
 * an integer); query strings and path params are converted from text first. A failure becomes a 400
 * GatewayError naming the field in `param`. Path params, query strings and every admin input refuse
 * NUL characters (the database cannot store them; no id or name needs one).
 */
import type { FastifySchemaCompiler } from 'fastify';
import type { TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { Value } from 'typebox/value';
import { errors } from '../lib/error-catalogue.ts';
import { findNulByte } from '../lib/nul-bytes.ts';
import { describeSchemaErrors, formatIssue } from '../lib/schema-errors.ts';

export const validatorCompiler: FastifySchemaCompiler<TSchema> = ({ schema, httpPart, url }) => {
  const validator = Compile(schema);
  const convert = httpPart !== 'body';
  const refuseNul = httpPart !== 'body' || url.startsWith('/ui/api/');
  return (input: unknown) => {
    const nulAt = refuseNul ? findNulByte(input) : undefined;
    if (nulAt !== undefined) {
      return {
        error: errors.invalidRequest(
          `Invalid field ${nulAt || httpPart}: NUL characters are not allowed.`,
          nulAt || null,
        ),
      };
    }
    const value = convert ? Value.Convert(schema, Value.Default(schema, input ?? {})) : input;
    if (validator.Check(value)) return { value };
    const [issue] = describeSchemaErrors(schema, validator.Errors(value));
    const where = httpPart === 'body' ? '' : `${httpPart} `;
    const message = issue ? `Invalid ${where}field ${formatIssue(issue)}.` : `Invalid ${httpPart}.`;
    return { error: errors.invalidRequest(message, issue?.path || null) };
  };
};
