import type { ErrorShape, Surface } from './errorBodies.js';
import { MEMORY_SODA_ROOT } from './memorySoda.js';
import { SUPACLOUD_BASE } from './supaCloud.js';

/** Each REST surface's base path: every route of the surface lies below it. */
export const SURFACE_BASES: Record<Surface, string> = {
  memorySoda: MEMORY_SODA_ROOT,
  supaCloud: SUPACLOUD_BASE,
};

const isUnder = (path: string, base: string) => path === base || path.startsWith(`${base}/`);

/** Which REST surface a path belongs to (its error shape), or null for the others. */
export const surfaceOf = (path: string): Surface | null =>
  isUnder(path, MEMORY_SODA_ROOT)
    ? 'memorySoda'
    : isUnder(path, SUPACLOUD_BASE)
      ? 'supaCloud'
      : null;

/** Where MCP clients connect (src/mcp/server.ts). */
export const MCP_PATH = '/mcp';

/**
 * The shape of the errors the edge answers for a path: its REST surface's, MCP's (JSON-RPC),
 * else GraphQL's (the path is /graphql, a probe, or not known yet).
 */
export const errorShapeOf = (path: string): ErrorShape =>
  surfaceOf(path) ?? (path === MCP_PATH ? 'mcp' : 'graphql');
