import { describe, expect, it } from 'vitest';
import { DONE, nextCursors } from '../../explorer/src/paging.ts';

/**
 * The "what changed" view pages two lists in one request. A list that finishes first
 * must drop out of later requests, not start again from its first page (an empty page's
 * endCursor is null, which would mean "from the start").
 */
const page = (hasNextPage: boolean, endCursor: string | null) => ({ hasNextPage, endCursor });

describe('nextCursors', () => {
  it('continues each unfinished list after its own end, and marks a finished one done', () => {
    expect(
      nextCursors(
        { learned: null, dropped: null },
        { learned: page(true, 'l1'), dropped: page(false, 'd1') },
      ),
    ).toEqual({ learned: 'l1', dropped: DONE });
  });

  it('keeps a done list done, even when the request left it out (no page info)', () => {
    expect(
      nextCursors(
        { learned: 'l1', dropped: DONE },
        { learned: page(true, 'l2'), dropped: undefined },
      ),
    ).toEqual({ learned: 'l2', dropped: DONE });
    // An empty last page (endCursor null) finishes a list rather than restarting it.
    expect(
      nextCursors(
        { learned: 'l2', dropped: DONE },
        { learned: page(false, null), dropped: undefined },
      ),
    ).toBeUndefined();
  });

  it('is done when every list is', () => {
    expect(
      nextCursors({ a: null, b: null }, { a: page(false, 'a1'), b: page(false, null) }),
    ).toBeUndefined();
  });
});
