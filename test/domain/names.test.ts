import { describe, expect, it } from 'vitest';
import { nearestNames } from '../../src/domain/names.js';

/** What an unknown dataset's name may have been meant as (the MCP tools' NOT_FOUND). */
describe('nearestNames', () => {
  const names = ['alice', 'alicia', 'bob', 'user_42', 'user_43', 'user_420', 'zed'];

  it('the same but for case first, then a typo away, the nearest first, then in name order', () => {
    expect(nearestNames('Alice', names)).toEqual(['alice', 'alicia']);
    expect(nearestNames('user-42', names)).toEqual(['user_42', 'user_420', 'user_43']);
    expect(nearestNames('bbo', names)).toEqual(['bob']);
  });

  it('at most `max`, and none when nothing is near', () => {
    expect(nearestNames('user-42', names, 1)).toEqual(['user_42']);
    expect(nearestNames('conversation-7', names)).toEqual([]);
    expect(nearestNames('anything', [])).toEqual([]);
  });

  it('a long name is suggested for a case difference alone (no edit distance over long names)', () => {
    const long = `user_${'x'.repeat(100)}`;
    expect(nearestNames(long.toUpperCase(), [long])).toEqual([long]);
    expect(nearestNames(`${long}y`, [long])).toEqual([]);
  });
});
