import {
  createSourceEventStream,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  execute,
} from 'graphql';
import { type FetchAPI, type Plugin, processRegularResult } from 'graphql-yoga';
import type { RequestContext } from '../context.js';
import type { FeedChange } from '../store/changes.js';
import type { FeedEvent } from '../store/changeWatch.js';

/**
 * A change pushed to many streams is executed once per distinct operation, and its event
 * serialized once: the subscribers of a dataset nearly always send the same document and
 * variables, and a change's answer does not depend on which of them asks (they share one
 * workspace, one instant and one set of loaders: src/http/liveStreams.ts; what each key
 * may run was decided before execution). So each stream's event execution looks up the change and
 * its operation (the same document object for the same text, from Yoga's parse cache, and
 * the same variables) and reuses the result the first stream computed. Without it every
 * subscriber pays the whole execution of every change (docs/PERFORMANCE.md, "Live
 * updates").
 */

/** Results by change, then document, then operation name and variables. */
const results = new WeakMap<
  FeedChange,
  WeakMap<DocumentNode, Map<string, Promise<ExecutionResult>>>
>();

function executeEvent(args: ExecutionArgs, event: FeedEvent): Promise<ExecutionResult> {
  // Each event's execution takes one of the workspace's fairness slots, as a query does.
  const ctx = args.contextValue as RequestContext;
  const run = () =>
    ctx.inWorkspaceSlot(
      async () => execute({ ...args, rootValue: event }) as Promise<ExecutionResult>,
    );
  if (!('change' in event)) return run();
  let byDocument = results.get(event.change);
  if (!byDocument) {
    byDocument = new WeakMap();
    results.set(event.change, byDocument);
  }
  let byOperation = byDocument.get(args.document);
  if (!byOperation) {
    byOperation = new Map();
    byDocument.set(args.document, byOperation);
  }
  const key = JSON.stringify([args.operationName ?? null, args.variableValues ?? null]);
  let result = byOperation.get(key);
  if (!result) {
    result = run();
    byOperation.set(key, result);
  }
  return result;
}

const isAsyncIterable = (value: unknown): value is AsyncIterable<unknown> =>
  typeof value === 'object' && value !== null && Symbol.asyncIterator in value;

/*
 * GraphQL over SSE, written the way Yoga's own result processor writes it (a heartbeat
 * comment first and every 12 s, `event: next` per result, `event: complete` at the end),
 * except that each event's bytes are made once per result and written as one chunk: the
 * streams sharing a change's result write the same bytes, where Yoga's processor
 * serializes it again for each of them, in three chunks per event (docs/PERFORMANCE.md,
 * "Live updates").
 */
const encoder = new TextEncoder();
const HEARTBEAT = encoder.encode(':\n\n');
const COMPLETE = encoder.encode('event: complete\ndata:\n\n');
/** Also when a stream whose client left unseen is ended at the latest: its write fails. */
export const SSE_HEARTBEAT_MS = 12_000;

/** Each result's `event: next` bytes; Yoga's JSON answer supplies the text (internals omitted). */
const eventBytes = new WeakMap<ExecutionResult, Promise<Uint8Array>>();

function bytesOf(result: ExecutionResult, fetchAPI: FetchAPI): Promise<Uint8Array> {
  let bytes = eventBytes.get(result);
  if (!bytes) {
    bytes = Promise.resolve(processRegularResult(result, fetchAPI, 'application/json'))
      .then((response) => response.text())
      .then((json) => encoder.encode(`event: next\ndata: ${json}\n\n`));
    eventBytes.set(result, bytes);
  }
  return bytes;
}

function eventStream(results: AsyncIterable<ExecutionResult>, fetchAPI: FetchAPI): Response {
  const events = results[Symbol.asyncIterator]();
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  const body = new fetchAPI.ReadableStream<Uint8Array>({
    start(controller) {
      // First, so that a client whose fetch waits for a body byte sees the stream begin.
      controller.enqueue(HEARTBEAT);
      heartbeat = setInterval(() => {
        if (controller.desiredSize === null) clearInterval(heartbeat);
        else if (controller.desiredSize > 0) controller.enqueue(HEARTBEAT);
      }, SSE_HEARTBEAT_MS);
    },
    async pull(controller) {
      try {
        const next = await events.next();
        if (next.value != null) controller.enqueue(await bytesOf(next.value, fetchAPI));
        if (next.done) {
          clearInterval(heartbeat);
          controller.enqueue(COMPLETE);
          controller.close();
        }
      } catch (error) {
        clearInterval(heartbeat);
        controller.error(error);
      }
    },
    async cancel(reason) {
      clearInterval(heartbeat);
      await events.return?.(reason);
    },
  });
  return new fetchAPI.Response(body, {
    status: 200,
    headers: {
      'Content-Type': 'text/event-stream',
      Connection: 'keep-alive',
      'Cache-Control': 'no-cache',
      'Content-Encoding': 'none',
    },
  });
}

/** The requests whose operation is a subscription (Yoga's own result processing tells them apart so). */
const subscriptionRequests = new WeakSet<Request>();

/**
 * Subscriptions: the source stream as graphql-js makes it, each event executed shared; a
 * subscription's stream answered over SSE is written by eventStream.
 */
export const sharedEventExecution: Plugin<RequestContext> = {
  onResultProcess({ request, result, resultProcessor, setResultProcessor }) {
    // Yoga has chosen SSE: for a subscription's stream it is the only processor there is.
    if (resultProcessor && subscriptionRequests.has(request) && isAsyncIterable(result)) {
      setResultProcessor(
        (results, fetchAPI) => eventStream(results as AsyncIterable<ExecutionResult>, fetchAPI),
        'text/event-stream',
      );
    }
  },
  onSubscribe({ args, setSubscribeFn }) {
    const request = (args.contextValue as { request?: Request }).request;
    if (request) subscriptionRequests.add(request);
    setSubscribeFn(async (args) => {
      const source = await createSourceEventStream(args);
      if (!isAsyncIterable(source)) return source;
      const events = source[Symbol.asyncIterator]() as AsyncIterator<FeedEvent>;
      const mapped: AsyncIterableIterator<ExecutionResult> = {
        [Symbol.asyncIterator]() {
          return this;
        },
        async next() {
          const ctx = args.contextValue as RequestContext;
          for (;;) {
            const next = await events.next();
            if (next.done) return { done: true, value: undefined };
            const result = await executeEvent(args, next.value);
            // A key revoked while its event was executing: the event is not delivered,
            // the stream's end (already waiting in its place) is.
            if ('change' in next.value && ctx.live?.keyEnded(ctx.auth?.keyId)) continue;
            return { done: false, value: result };
          }
        },
        async return() {
          await events.return?.();
          return { done: true, value: undefined };
        },
      };
      return mapped;
    });
  },
};
