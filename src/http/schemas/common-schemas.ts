/** Schemas shared by route files: the error envelope, list pages, ids in paths. */
import Type from 'typebox';

export const ErrorBody = Type.Object(
  {
    error: Type.Object({
      message: Type.String(),
      type: Type.String(),
      param: Type.Union([Type.String(), Type.Null()]),
      code: Type.String(),
    }),
  },
  { description: 'The OpenAI error envelope.' },
);

export const errorResponses = {
  400: ErrorBody,
  401: ErrorBody,
  403: ErrorBody,
  404: ErrorBody,
  429: ErrorBody,
  500: ErrorBody,
  503: ErrorBody,
};

export const IdParam = (name: string) =>
  Type.Object({ [name]: Type.String({ minLength: 1, maxLength: 128 }) });

export const adminSecurity = [{ masterKey: [] }];
export const callerSecurity = [{ apiKey: [] }];
