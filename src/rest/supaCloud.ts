/*
 * SupaCloud's memories API (where its document is silent, docs/COMPATIBILITY.md):
 * GET /api/memories lists the key's workspace's memories (every dataset) as snake_case
 * objects with every listed field (`null` where empty), newest first. Errors are
 * `{ "code", "error", "details" }`.
 */

import { createRoute, z } from '@hono/zod-openapi';
import { perSupaCloudField, type SupaCloudKind } from '../domain/supaCloudMemory.js';
import { SupaCloudListMemoriesDocument } from '../generated/operations.js';
import { WHOLE_LIST_CAP } from '../schema/cost.js';
import { CAPPED_LIST_HEADERS, capHeaders } from './capped.js';
import { edgeResponses } from './edgeResponses.js';
import { booleanParam, firstOccurrence, rfc3339Param } from './params.js';
import { runOperation } from './runOperation.js';
import { surfaceApp } from './surfaceApp.js';

export const SUPACLOUD_BASE = '/api';
/** The OpenAPI tag that groups this surface's routes in /openapi.json and /docs. */
export const SUPACLOUD_TAG = 'SupaCloud memories API';

const ERROR_CODES = [
  'not_found',
  'unauthorized',
  'forbidden',
  'license_required',
  'license_expired',
  'bad_request',
  'unprocessable',
  'precondition_failed',
  'conflict',
  'method_not_allowed',
  'rate_limited',
  'too_many_requests',
  'quota_exceeded',
  'database_error',
  'docker_error',
  'vault_error',
  'internal_error',
] as const;

const ApiErrorBody = z
  .object({
    code: z.enum(ERROR_CODES).openapi({ description: 'Machine-readable, stable error code.' }),
    details: z.null(),
    error: z
      .string()
      .openapi({ description: "Human-readable message (the server's English text)." }),
  })
  .openapi('ApiErrorBody');

const dateTime = z.string().openapi({ format: 'date-time' });
const uuid = z.string().openapi({ format: 'uuid' });

/** The OpenAPI schema of each kind of SupaCloud value. */
const OPENAPI_KIND: Record<SupaCloudKind, z.ZodType> = {
  instant: dateTime,
  uuid,
  double: z.number().openapi({ format: 'double' }),
  int32: z.number().int().openapi({ format: 'int32' }),
  string: z.string(),
  boolean: z.boolean(),
};

/** SupaCloud's memory object, from the one list of its fields (domain/supaCloudMemory.ts). */
const Memory = z
  .object(
    perSupaCloudField((spec) =>
      spec.nullable ? OPENAPI_KIND[spec.kind].nullable() : OPENAPI_KIND[spec.kind],
    ),
  )
  .openapi('Memory');

const errorContent = { 'application/json': { schema: ApiErrorBody } };

const listMemories = createRoute({
  tags: [SUPACLOUD_TAG],
  method: 'get',
  path: `${SUPACLOUD_BASE}/memories`,
  summary: "List the workspace's memories",
  description:
    "Optionally including archived ones and optionally as of an instant on the validity axis. Absent `as_of`: the live view (valid_until null or in the future, not archived). `as_of`: validity membership at that instant (valid_from <= as_of < valid_until) with today's metadata. Newest (created_at) first.",
  security: [{ Bearer: [] }],
  request: {
    query: z.object({
      include_archived: firstOccurrence(booleanParam.optional()).openapi({ type: 'boolean' }),
      as_of: firstOccurrence(rfc3339Param.optional()).openapi({
        type: 'string',
        format: 'date-time',
        description: 'An RFC3339 (UTC) instant. An invalid value is a 400.',
      }),
    }),
  },
  responses: {
    200: {
      description: `List of workspace memories, up to ${WHOLE_LIST_CAP.toLocaleString('en-US')}`,
      headers: CAPPED_LIST_HEADERS,
      content: { 'application/json': { schema: z.array(Memory) } },
    },
    400: { description: 'Structured client error', content: errorContent },
    401: { description: 'Authentication required', content: errorContent },
    403: { description: 'Permission denied', content: errorContent },
    500: { description: 'Structured server error', content: errorContent },
    ...edgeResponses(errorContent),
  },
});

export function supaCloudRoutes() {
  const app = surfaceApp('supaCloud');

  app.openapi(listMemories, async (c) => {
    const query = c.req.valid('query');
    const data = await runOperation(c.get('requestContext'), SupaCloudListMemoriesDocument, {
      includeArchived: query.include_archived ?? false,
      asOf: query.as_of?.toISOString() ?? null,
    });
    // The operation's aliases already give SupaCloud's names, in its order.
    return c.json(data.allMemories, 200, capHeaders(data.allMemories.length, WHOLE_LIST_CAP));
  });

  return app;
}
