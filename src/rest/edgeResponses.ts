/**
 * The statuses every route can answer before (or instead of) its own work: the edge's
 * limits and an unavailable database, each in the surface's error body. Declared on every
 * route of /openapi.json so clients (and schema-driven testers) know them.
 */
export function edgeResponses<Content>(content: Content) {
  return {
    408: { description: 'The request did not arrive in time (REQUEST_TIMEOUT_MS)', content },
    413: { description: 'Request body too large (BODY_LIMIT_BYTES)', content },
    414: { description: 'URL too long (at most 8192 characters)', content },
    415: {
      description:
        'A request body in a media type the route does not take (routes with a body take application/json, UTF-8)',
      content,
    },
    429: {
      description: 'Too many requests for the key or the client address; retry after Retry-After',
      headers: {
        'Retry-After': {
          description: 'Seconds to wait before retrying',
          schema: { type: 'integer' as const, minimum: 1 },
        },
      },
      content,
    },
    431: { description: 'Request line and headers too large (at most 16 KiB)', content },
    503: { description: 'The database is unavailable; retry shortly', content },
  };
}
