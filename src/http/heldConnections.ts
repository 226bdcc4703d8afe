import type { Context } from 'hono';
import type { GatewayEnv } from '../context.js';
import { GatewayError } from '../errors.js';
import { errorResponse } from '../rest/errorBodies.js';
import { errorShapeOf } from '../rest/surfaces.js';
import { peerAddress } from './hosts.js';
import type { HeldConnection, LiveStreams } from './liveStreams.js';
import type { Metrics } from './observability.js';

/**
 * Retry-After of a refused stream: a place frees when one of the connections closes, which
 * no window predicts; a few seconds keeps a retrying client from hammering.
 */
const RETRY_AFTER_SECONDS = 5;

/**
 * An answer streamed over SSE holds its connection open as long as it streams, so it counts
 * against its client address and its key (LIVE_CONNECTIONS_PER_ADDRESS,
 * LIVE_CONNECTIONS_PER_KEY) as a WebSocket does (src/http/webSocket.ts), from the answer
 * until its end or its client's leaving. Past a cap it is refused before its first event,
 * in its surface's error shape with Retry-After.
 * What the WebSocket transport hands in belongs to its connection, counted there; an
 * in-process request holds no connection.
 */
export async function heldWhileStreaming(
  c: Context<GatewayEnv>,
  live: LiveStreams,
  response: Response,
  metrics: Metrics | undefined,
): Promise<Response> {
  const address = peerAddress(c);
  const handedIn = (c.env as GatewayEnv['Bindings'] | undefined)?.transport;
  const streaming = response.headers.get('content-type')?.startsWith('text/event-stream');
  if (!streaming || !response.body || !address || handedIn === 'graphql-ws') return response;
  let held: HeldConnection | null = null;
  try {
    held = live.holdConnection(address);
    const ctx = c.get('requestContext');
    // Its end needs no closing here: the key's streams end, and the answer with them.
    if (ctx.auth) held.identify({ auth: ctx.auth, keyStillValid: ctx.keyStillValid }, () => {});
  } catch (error) {
    held?.release();
    if (!(error instanceof GatewayError)) throw error;
    await response.body.cancel();
    metrics?.errors.inc({ code: error.code });
    if (error.code === 'RATE_LIMITED') c.header('Retry-After', String(RETRY_AFTER_SECONDS));
    return errorResponse(c, errorShapeOf(c.req.path), error.code, error.message);
  }
  const release = held.release;
  c.get('requestContext').signal.addEventListener('abort', release, { once: true });
  return new Response(releasedAtEnd(response.body, release), response);
}

/** The same bytes, calling `release` once the stream ends, fails or its reader cancels it. */
function releasedAtEnd(
  body: ReadableStream<Uint8Array>,
  release: () => void,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { value, done } = await reader.read();
        if (done) {
          release();
          controller.close();
        } else {
          controller.enqueue(value);
        }
      } catch (error) {
        release();
        controller.error(error);
      }
    },
    async cancel(reason) {
      release();
      await reader.cancel(reason);
    },
  });
}
