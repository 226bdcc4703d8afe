import {
  createSourceEventStream,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  execute,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { RequestContext } from '../context.js';
import type { FeedChange } from '../store/changes.js';
import type { FeedEvent } from '../store/changeWatch.js';

/**
 * A change pushed to many streams is executed once per distinct operation: the
 * subscribers of a dataset nearly always send the same document and variables, and a
 * change's answer does not depend on which of them asks (they share one workspace, one
 * instant and one set of loaders: src/http/liveStreams.ts; what each key may run was
 * decided before execution). So each stream's event execution looks up the change and
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
  const run = async () => execute({ ...args, rootValue: event }) as Promise<ExecutionResult>;
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

/** Subscriptions: the source stream as graphql-js makes it, each event executed shared. */
export const sharedEventExecution: Plugin<RequestContext> = {
  onSubscribe({ setSubscribeFn }) {
    setSubscribeFn(async (args) => {
      const source = await createSourceEventStream(args);
      if (!isAsyncIterable(source)) return source;
      const events = source[Symbol.asyncIterator]() as AsyncIterator<FeedEvent>;
      const mapped: AsyncIterableIterator<ExecutionResult> = {
        [Symbol.asyncIterator]() {
          return this;
        },
        async next() {
          const next = await events.next();
          if (next.done) return { done: true, value: undefined };
          return { done: false, value: await executeEvent(args, next.value) };
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
