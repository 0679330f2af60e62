import Type from 'typebox';
import { Compile } from 'typebox/compile';
import { describe, expect, it } from 'vitest';
import {
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
