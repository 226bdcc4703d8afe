import type { RequestContext } from '../context.js';

/** Hono's per-request variables: the context built once at the edge. */
export type GatewayEnv = { Variables: { requestContext: RequestContext; requestId: string } };
