import { beforeAll, describe, expect, it } from 'vitest';
import { productVoice } from '../../src/validation.js';
import { openTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * What a refused input is told, on every surface, is in the product's words: the field,
 * what is wrong and what is allowed; never zod's own ("Invalid input: expected string,
 * received undefined").
 */
let t: TestGateway;
let key: string;

beforeAll(async () => {
  t = await openTestGateway({ demoWorkspaces: ['development'] });
  key = await t.key('development', ['read']);
});

const ZOD_WORDS =
  /Invalid input|expected \w+, received|Too (big|small)|Invalid option|Unrecognized key/;

const recall = async (body: unknown) => {
  const response = await t.request('/v1/memory/recall', {
    method: 'POST',
    key,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as { error: string } };
};

describe('refusals name the field and what is allowed', () => {
  it.each([
    [{}, 'dataset: is required (a string); query: is required (a string)'],
    [{ dataset: 5, query: 'x' }, 'dataset: must be a string, not a number'],
    [{ dataset: 'user_42', query: ['x'] }, 'query: must be a string, not an array'],
    [{ dataset: 'user_42', query: 'x', limit: 0 }, /^limit: /],
  ])('Memory Soda recall %j', async (body, message) => {
    const answer = await recall(body);
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatch(message);
    expect(answer.body.error).not.toMatch(ZOD_WORDS);
  });

  it('the message map covers what zod checks without a message of its own', () => {
    const said = (issue: object) => productVoice(issue as never);
    expect(said({ code: 'invalid_type', expected: 'string', input: undefined })).toBe(
      'is required (a string)',
    );
    expect(said({ code: 'invalid_type', expected: 'object', input: null })).toBe(
      'must be an object, not null',
    );
    expect(said({ code: 'too_small', origin: 'string', minimum: 1, inclusive: true })).toBe(
      'must be at least 1 character long',
    );
    expect(said({ code: 'too_big', origin: 'array', maximum: 250, inclusive: true })).toBe(
      'must hold at most 250 items',
    );
    expect(said({ code: 'too_big', origin: 'number', maximum: 1, inclusive: true })).toBe(
      'must be at most 1',
    );
    expect(said({ code: 'invalid_value', values: ['chat', 'email'] })).toBe(
      'must be one of "chat", "email"',
    );
    expect(said({ code: 'unrecognized_keys', keys: ['extra'] })).toBe("unknown field 'extra'");
    expect(said({ code: 'invalid_format', format: 'uuid' })).toBe('must be a UUID');
  });
});
