/**
 * The lists the API documents call unpaginated stop at a cap (an answer with no bound is a
 * way to take the server down; docs/COMPATIBILITY.md). Their answers say so in headers:
 * `X-Result-Limit` always (the cap), and `X-Result-Limit-Reached: true` when the answer
 * holds that many items, so there may be more (GraphQL's connections page through them).
 */
export const CAPPED_LIST_HEADERS = {
  'X-Result-Limit': {
    description: 'The most items this list answers with',
    schema: { type: 'integer' as const, minimum: 1 },
  },
  'X-Result-Limit-Reached': {
    description:
      'Present (true) when the answer holds X-Result-Limit items: there may be more, readable through GraphQL pages',
    schema: { type: 'string' as const, enum: ['true'] },
  },
};

/** The capped-list headers of an answer of `count` items out of at most `limit`. */
export function capHeaders(count: number, limit: number): Record<string, string> {
  return {
    'x-result-limit': String(limit),
    ...(count >= limit ? { 'x-result-limit-reached': 'true' } : {}),
  };
}
