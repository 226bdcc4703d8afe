import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context } from 'hono';
import { isLoopbackHostName, withoutTrailingDot } from '../domain/hostNames.js';

/**
 * Host names and peers, for two rules of the embedded (development) mode:
 * - requests whose `Host` is not an allowed host are refused (ALLOWED_HOSTS), so a web
 *   page cannot reach the gateway through a DNS name it rebinds to 127.0.0.1;
 * - the pages that can carry the development key (GraphiQL, the explorer) carry it only
 *   to a loopback `Host` from a loopback peer (`developmentKeyFor`).
 */

/** The Node adapter's binding, read for the request line and Host a request came with. */
interface ListenerBinding {
  incoming?: { url?: string; headers?: { host?: string } };
}

/**
 * The host name a request was sent to, lower-cased, without port or trailing dot. The
 * listener (src/http/server.ts) has read its Host as a URL reads it and the Node adapter
 * built the request's URL from that, so this is the URL's host; but a request whose target
 * is a path and whose Host is empty or missing (HTTP/1.0) names no host at all: the adapter
 * put the listener's own address in its URL, which must not pass for an allowed name.
 */
export function requestHostName(c: Context): string {
  const incoming = (c.env as ListenerBinding | undefined)?.incoming;
  if (incoming?.url?.startsWith('/') && !incoming.headers?.host) return '';
  return withoutTrailingDot(new URL(c.req.url).hostname.toLowerCase());
}

/** The client's address as the socket tells it, or null (a request made in-process). */
export function peerAddress(c: Context): string | null {
  try {
    return getConnInfo(c).remote.address ?? null;
  } catch {
    return null;
  }
}

/** 127.0.0.0/8 and ::1, also as IPv4-mapped IPv6 addresses. */
function isLoopbackAddress(address: string | null): boolean {
  if (!address) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return v4 === '::1' || /^127(\.\d{1,3}){3}$/.test(v4);
}

/**
 * The development key a page may carry: only to a loopback `Host` and from a loopback
 * peer (a request naming `Host: localhost` from elsewhere, such as an absolute-form
 * request through a proxy, gets none). The gateway is given no key at all with
 * NODE_ENV=production (src/main.ts).
 */
export function developmentKeyFor(c: Context, key: string | undefined): string | null {
  if (!key) return null;
  if (!isLoopbackHostName(requestHostName(c))) return null;
  return isLoopbackAddress(peerAddress(c)) ? key : null;
}
