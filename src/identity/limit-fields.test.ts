import Type from 'typebox';
import { Compile } from 'typebox/compile';
import { describe, expect, it } from 'vitest';
import {
  checkBudgets,
  checkModelMaps,
  modelOutputLimitProperty,
  normalizeModelMaps,
  parallelLimitProperty,
  scopeLimitProperties,
} from './limit-fields.ts';

const validator = Compile(
  Type.Object({ ...scopeLimitProperties, ...modelOutputLimitProperty, ...parallelLimitProperty }),
);

describe('identity limit fields', () => {
  it('accept integers and null for every scalar limit', () => {
    expect(
      validator.Check({ rpm_limit: 10, tpm_limit: null, rph_limit: 0, rpd_limit: 5, tpd_limit: 1e9 }),
    ).toBe(true);
  });

  it.each([
    ['a string', '1000'],
    ['a boolean', true],
    ['a fraction', 1.5],
    ['zero', 0],
    ['a negative number', -1],
    ['above 2147483647', 2_147_483_648],
  ])('reject output_tpm_limit given as %s', (_case, value) => {
    expect(validator.Check({ output_tpm_limit: value })).toBe(false);
  });

  it('accept output_tpm_limit from 1 to 2147483647 and null', () => {
    for (const value of [1, 2_147_483_647, null])
      expect(validator.Check({ output_tpm_limit: value })).toBe(true);
  });

  it('reject a model map with more than 64 entries', () => {
    const map = Object.fromEntries(Array.from({ length: 65 }, (_, index) => [`m${index}`, 1]));
    expect(validator.Check({ model_output_tpm_limit: map })).toBe(false);
  });

  it('reject non-integer or zero values in model_output_tpm_limit', () => {
    expect(validator.Check({ model_output_tpm_limit: { a: 0 } })).toBe(false);
    expect(validator.Check({ model_output_tpm_limit: { a: '5' } })).toBe(false);
    expect(validator.Check({ model_output_tpm_limit: { a: 5 } })).toBe(true);
  });

  it.each([
    ['a wildcard', 'gpt-*'],
    ['a control character', 'gpt\u0007'],
    ['a leading space', ' gpt-4o'],
    ['a trailing space', 'gpt-4o '],
    ['more than 256 UTF-8 bytes', 'é'.repeat(129)],
  ])('reject a model id with %s, naming the field', (_case, id) => {
    const error = checkModelMaps({ model_output_tpm_limit: { [id]: 10 } });
    expect(error?.status).toBe(400);
    expect(error?.param).toBe('model_output_tpm_limit');
  });

  it('accept an id of exactly 256 UTF-8 bytes and route-group ids', () => {
    expect(
      checkModelMaps({ model_output_tpm_limit: { ['é'.repeat(128)]: 10, 'my-route-group': 5 } }),
    ).toBeUndefined();
  });

  it('reject a map whose stored JSON exceeds 32 KiB (ids that need escaping double in size)', () => {
    const map = Object.fromEntries(
      Array.from({ length: 64 }, (_, index) => [`${'"'.repeat(254)}${index}`, 1]),
    );
    expect(checkModelMaps({ model_rpm_limit: map })?.param).toBe('model_rpm_limit');
  });

  it('treat an empty map as clearing the field', () => {
    expect(normalizeModelMaps({ model_output_tpm_limit: {} }).model_output_tpm_limit).toBeNull();
  });
});

describe('budget fields', () => {
  it('accept USD amounts 0..1e12 and Nd/Nh durations, or null', () => {
    expect(validator.Check({ max_budget: 12.5, soft_budget: 0, budget_duration: '30d' })).toBe(true);
    expect(validator.Check({ max_budget: null, soft_budget: 1e12, budget_duration: '8760h' })).toBe(true);
    for (const bad of [
      { max_budget: '10' },
      { max_budget: -0.01 },
      { soft_budget: 1e12 + 1 },
      { budget_duration: '366d' },
      { budget_duration: '0h' },
      { budget_duration: '1w' },
    ])
      expect(validator.Check(bad), JSON.stringify(bad)).toBe(false);
  });

  it('refuse soft_budget above max_budget and a duration out of range, naming the field', () => {
    expect(checkBudgets({ max_budget: 1, soft_budget: 2 })?.param).toBe('soft_budget');
    expect(checkBudgets({ max_budget: 2, soft_budget: 2 })).toBeUndefined();
    expect(checkBudgets({ budget_duration: '400d' })?.param).toBe('budget_duration');
    expect(checkBudgets({ max_budget: Number.POSITIVE_INFINITY })?.param).toBe('max_budget');
  });
});
