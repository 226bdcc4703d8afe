import type { Surface } from './errorBodies.js';
import { MEMORY_SODA_BASE } from './memorySoda.js';

/** Which REST surface a path belongs to (its error shape), or null for the others. */
export const surfaceOf = (path: string): Surface | null =>
  path.startsWith(`${MEMORY_SODA_BASE}/`) || path === MEMORY_SODA_BASE
    ? 'memorySoda'
    : path.startsWith('/api/') || path === '/api'
      ? 'supaCloud'
      : null;
