import { describe, expect, it } from 'vitest';
import { unknownParamProblems } from './unknown-params.ts';

describe('deployment params no provider reads (issue 10: api_bsae started cleanly)', () => {
  const openAi = ['api_base', 'api_key', 'organization', 'headers'];

  it('refuses a misspelled address or credential, naming the param and the likely one', () => {
    const { errors } = unknownParamProblems(
      { provider: 'openai', model: 'm', api_bsae: 'http://x' },
      openAi,
      'model_list[0].params',
    );
    expect(errors).toEqual([
      "model_list[0].params.api_bsae: unknown param (did you mean 'api_base'?); a misspelled address or credential is refused",
    ]);
    expect(unknownParamProblems({ apikey: 'k' }, openAi, 'p').errors[0]).toContain("did you mean 'api_key'");
  });

  it('warns about other unknown params by name, with the closest known one', () => {
    const { errors, warnings } = unknownParamProblems(
      { model: 'm', wieght: 2, frobnicate: true },
      openAi,
      'p',
    );
    expect(errors).toEqual([]);
    expect(warnings).toEqual([
      "p.wieght: not used by this provider, ignored (did you mean 'weight'?)",
      'p.frobnicate: not used by this provider, ignored',
    ]);
  });

  it('accepts the common params and the provider’s own', () => {
    const params = { provider: 'openai', model: 'm', api_base: 'http://x', headers: {}, weight: 1, rpm: 5 };
    expect(unknownParamProblems(params, openAi, 'p')).toEqual({ errors: [], warnings: [] });
  });
});
