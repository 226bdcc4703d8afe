/*
 * Following datasets over MCP 2026-07-28 (docs/MCP.md, "Following a dataset"): a
 * `subscriptions/listen` naming datasets' resources (`resourceSubscriptions`) is answered
 * by the SDK's listen stream (its acknowledgement first), and each change of a followed
 * dataset is announced on it as `notifications/resources/updated`; the agent then reads
 * what changed with `what_changed` from the cursor it kept.
 *
 * The changes come from the gateway's change feed (src/http/liveStreams.ts through the
 * context's `live`), not from the writes this process saw, so every replica announces every
 * change; each dataset followed is one live stream of the key, counted and capped as
 * GraphQL's are, and opened before the answer, so a cap or an ended key is an HTTP refusal.
 * The SDK's event bus is this request's own: it carries only the key's workspace's
 * changes (the URI names no workspace). Each announcement takes one of the workspace's
 * fairness slots, as every event of a stream does. A key revoked or expired, the gateway
 * shutting down or a stream that fell behind ends the listen with a JSON-RPC error
 * saying why.
 *
 * The SDK writes announcements without waiting for the client to read them, so one not yet
 * read stands for every later change of its dataset: a change that comes while its
 * dataset's announcement is unread is not announced again. The agent loses nothing by it:
 * such a change is in the feed before the announcement reaches it, and the what_changed it
 * then calls tells every change after its cursor.
 */

import { InMemoryServerEventBus } from '@modelcontextprotocol/server';
import type { AuthenticatedContext } from '../context.js';
import { type ErrorCode, GatewayError, maskError } from '../errors.js';
import { jsonRpcErrorBody } from '../rest/errorBodies.js';
import type { FeedEvent, StreamEnd } from '../store/changeWatch.js';

/** One dataset an agent follows: its resource's URI and its name. */
export interface FollowedDataset {
  uri: string;
  dataset: string;
}

/** How a listen the gateway ends says why, and what to do next. */
const LISTEN_ENDS: Record<StreamEnd, [ErrorCode, string]> = {
  overflow: [
    'STREAM_OVERFLOW',
    'This listen fell too far behind (LIVE_BUFFER changes waiting); listen again and call what_changed with the cursor you kept',
  ],
  shutdown: [
    'SHUTTING_DOWN',
    'This gateway process is shutting down; listen again (another replica answers) and call what_changed with the cursor you kept',
  ],
  revoked: [
    'UNAUTHENTICATED',
    'The API key of this listen is no longer valid (revoked or expired)',
  ],
};

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const UPDATED = '"notifications/resources/updated"';

/**
 * The datasets' changes, followed for the request's key from now: opened at once (a
 * GatewayError when a cap is reached or the key has ended, the streams opened so far
 * closed again), announced once `announceOn` has the SDK's answer.
 */
export function followDatasets(ctx: AuthenticatedContext, datasets: readonly FollowedDataset[]) {
  const live = ctx.live;
  if (!live) throw new GatewayError('NOT_BUILT', 'Live updates are not served here');
  const follows: {
    uri: string;
    events: AsyncIterableIterator<FeedEvent>;
    first: Promise<IteratorResult<FeedEvent>>;
    joined: Promise<void>;
  }[] = [];
  try {
    for (const { uri, dataset } of datasets) {
      const tenant = { workspaceId: ctx.auth.workspaceId, dataset };
      const events = live.follow(ctx, tenant, null);
      // Asked at once, so "now" in the feed is fixed before the listen is acknowledged.
      const first = events.next();
      first.catch(() => {});
      follows.push({ uri, events, first, joined: events.joined });
    }
  } catch (error) {
    for (const { events } of follows) void events.return?.();
    throw error;
  }
  const bus = new InMemoryServerEventBus();
  const leave = () => {
    for (const { events } of follows) void events.return?.();
  };
  return {
    /** The bus the request's SDK handler streams from (createMcpHandler's `bus`). */
    bus,
    /** Closes the streams, when the SDK failed to answer at all. */
    close: leave,
    /**
     * Settles once every stream knows where its feed ends: a change committed after it is
     * announced, so the acknowledgement waits for it (an agent that then calls what_changed
     * misses nothing between the two).
     */
    ready: Promise.all(follows.map((f) => f.joined)),
    /**
     * The SDK's answer to the listen, announcing the changes from here on; any other answer
     * (the SDK refused the request) is returned as it is, the streams closed.
     */
    announceOn(response: Response, listenId: string | number): Response {
      const streaming = response.headers.get('content-type')?.startsWith('text/event-stream');
      if (!streaming || !response.body) {
        leave();
        return response;
      }
      /** The datasets whose announcement the client has not been handed yet. */
      const unread = new Set<string>();
      let ended = false;
      let controller!: ReadableStreamDefaultController<Uint8Array>;
      const reader = response.body.getReader();
      const announce = (uri: string) =>
        ctx
          .inWorkspaceSlot(async () => {
            if (!ended) bus.publish({ kind: 'resource_updated', uri });
          })
          .catch(failed);
      const end = (why: [ErrorCode, string] | null) => {
        if (ended) return;
        ended = true;
        leave();
        try {
          if (why) {
            const frame = JSON.stringify(jsonRpcErrorBody(why[0], why[1], listenId));
            controller.enqueue(encoder.encode(`event: message\ndata: ${frame}\n\n`));
          }
          controller.close();
        } catch {
          // The client cancelled the stream: there is no one left to tell.
        }
        void reader.cancel().catch(() => {});
      };
      // No slot within the event's deadline, or the database failed: the listen ends, saying so.
      const failed = (error: unknown) => {
        const masked = maskError(error);
        end([String(masked.extensions.code) as ErrorCode, masked.message]);
      };
      const changed = async (uri: string) => {
        if (unread.has(uri)) return;
        unread.add(uri);
        await announce(uri);
      };
      // What the client has been handed: a dataset's announcement handed on frees the next.
      const handedOn = (chunk: Uint8Array) => {
        const text = decoder.decode(chunk);
        if (!text.includes(UPDATED)) return;
        const uri = follows.find((f) => text.includes(JSON.stringify(f.uri)))?.uri;
        if (uri !== undefined) unread.delete(uri);
      };
      const pump = async (
        uri: string,
        events: AsyncIterableIterator<FeedEvent>,
        first: Promise<IteratorResult<FeedEvent>>,
      ) => {
        for (let next = await first; ; next = await events.next()) {
          if (next.done || ended) return;
          if ('end' in next.value) return end(LISTEN_ENDS[next.value.end]);
          await changed(uri);
        }
      };
      return new Response(
        new ReadableStream<Uint8Array>({
          start(streamController) {
            controller = streamController;
            for (const { uri, events, first } of follows) {
              pump(uri, events, first).catch(failed);
            }
          },
          async pull(streamController) {
            let chunk: ReadableStreamReadResult<Uint8Array>;
            try {
              chunk = await reader.read();
            } catch (error) {
              // The SDK's stream failed: the listen ends saying so, never as if it were done.
              return failed(error);
            }
            if (ended) return;
            const { value, done } = chunk;
            if (done || !value) return end(null);
            streamController.enqueue(value);
            handedOn(value);
          },
          cancel() {
            end(null);
          },
        }),
        response,
      );
    },
  };
}
