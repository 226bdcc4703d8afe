import type { AddressInfo } from 'node:net';
import { type ServerType, serve } from '@hono/node-server';

/**
 * A real HTTP listener on 127.0.0.1 and a free port, for the browser tests: the gateway
 * (or any fetch handler) as a browser reaches it.
 */
export function listenOnLoopback(
  fetch: (request: Request) => Response | Promise<Response>,
): Promise<{ server: ServerType; port: number; origin: string }> {
  return new Promise((resolve, reject) => {
    const server = serve({ fetch, port: 0, hostname: '127.0.0.1' }, () => {
      const { port } = server.address() as AddressInfo;
      resolve({ server, port, origin: `http://127.0.0.1:${port}` });
    });
    server.once('error', reject);
  });
}

/** Closes a listener and every connection it still holds (browsers keep them alive). */
export async function closeServer(server: ServerType | null): Promise<void> {
  if (!server) return;
  if ('closeAllConnections' in server) server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}
