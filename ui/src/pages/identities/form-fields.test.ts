import { describe, expect, it } from 'vitest';
import { createBody, draftOf, type FormField, limitFieldsOf, parseField, updateBody } from './form-fields.ts';

const byName = (fields: readonly FormField[], name: string) => fields.find((field) => field.name === name)!;

describe('identity form bodies', () => {
  it('sends every limit field under its own API name (none of them is inert)', () => {
    const fields = limitFieldsOf.key;
    const draft = Object.fromEntries(
      fields.map((field) => [
        field.name,
        field.kind === 'modelMap' ? 'gpt-4o=7' : field.name === 'budget_duration' ? '30d' : '7',
      ]),
    );
    const { body, errors } = createBody(fields, draft);
    expect(errors).toEqual({});
    expect(body).toEqual({
      rpm_limit: 7,
      tpm_limit: 7,
      rph_limit: 7,
      rpd_limit: 7,
      tpd_limit: 7,
      output_tpm_limit: 7,
      max_parallel_requests: 7,
      max_budget: 7,
      soft_budget: 7,
      budget_duration: '30d',
      model_rpm_limit: { 'gpt-4o': 7 },
      model_tpm_limit: { 'gpt-4o': 7 },
      model_output_tpm_limit: { 'gpt-4o': 7 },
    });
  });

  it('offers each scope only the fields its API body takes (the API refuses unknown keys)', () => {
    const names = (fields: readonly FormField[]) => fields.map((field) => field.name);
    expect(names(limitFieldsOf.key)).toContain('max_parallel_requests');
    expect(names(limitFieldsOf.team)).not.toContain('max_parallel_requests');
    expect(names(limitFieldsOf.team)).toContain('model_output_tpm_limit');
    expect(names(limitFieldsOf.organization)).not.toContain('model_output_tpm_limit');
    expect(names(limitFieldsOf.user)).not.toContain('model_output_tpm_limit');
  });

  it('leaves empty fields out of a create body, so the API applies its defaults', () => {
    const fields = limitFieldsOf.team;
    const { body } = createBody(fields, { ...draftOf(fields), tpm_limit: ' 5000 ' });
    expect(body).toEqual({ tpm_limit: 5000 });
  });

  it('puts only changed fields in an update body, and an emptied field as null (clears it)', () => {
    const fields = limitFieldsOf.key;
    const stored = { rpm_limit: 60, tpm_limit: 1000, max_budget: 10, model_rpm_limit: { a: 1, b: 2 } };
    const baseline = draftOf(fields, stored);
    expect(baseline).toMatchObject({ rpm_limit: '60', max_budget: '10', model_rpm_limit: 'a=1, b=2' });
    const draft = { ...baseline, rpm_limit: '120', max_budget: '' };
    expect(updateBody(fields, draft, baseline)).toEqual({
      body: { rpm_limit: 120, max_budget: null },
      errors: {},
    });
  });

  it('refuses text that is not a number by field name instead of sending null (JSON has no NaN)', () => {
    const fields = limitFieldsOf.key;
    const { body, errors } = createBody(fields, { ...draftOf(fields), rpm_limit: 'ten', tpm_limit: '5' });
    expect(errors).toEqual({ rpm_limit: 'RPM limit must be a number; leave it empty for no limit.' });
    expect(body).toEqual({ tpm_limit: 5 });
  });

  it('passes out-of-range numbers to the API, whose 400 names the field (its rules stay in one place)', () => {
    expect(parseField(byName(limitFieldsOf.key, 'rpm_limit'), '-1')).toEqual({ value: -1 });
    expect(parseField(byName(limitFieldsOf.key, 'rpm_limit'), '1.5')).toEqual({ value: 1.5 });
  });

  it('reads model lists and model maps from comma-separated text', () => {
    const models: FormField = { name: 'models', label: 'Models', kind: 'models', group: 'details' };
    expect(parseField(models, ' gpt-4o, ,claude ')).toEqual({ value: ['gpt-4o', 'claude'] });
    expect(parseField(models, ' , ')).toEqual({ value: null });
    const map = byName(limitFieldsOf.key, 'model_tpm_limit');
    expect(parseField(map, 'openai/gpt-4o=100, claude = 5')).toEqual({
      value: { 'openai/gpt-4o': 100, claude: 5 },
    });
    expect(parseField(map, 'gpt-4o')).toHaveProperty('error');
    expect(parseField(map, 'gpt-4o=many')).toHaveProperty('error');
  });
});
