import { useEffect, useRef, useState } from 'react';
import { operationParams } from './api.ts';
import { ExplorerLiveChangesDocument } from './generated/operations.ts';

/**
 * Following a dataset's changes as they happen (the gateway's GraphQL over SSE): the
 * stream is read with fetch, so the key travels in the Authorization header as on every
 * other request (EventSource cannot send one). A dropped stream is opened again after a
 * pause, from the last change's cursor, so nothing is missed; an error event that ends the
 * stream (shutdown, a slow tab) is resumed the same way, a refused key is not.
 */

export type LiveState = 'live' | 'connecting' | 'off' | 'refused';

/** Waits before opening a dropped stream again (a gateway restarting answers soon). */
const RETRY_MS = 2000;

interface LiveEvent {
  data?: { datasetChanges?: { cursor: string; kind: string } } | null;
  errors?: { message: string; extensions?: { code?: string } }[];
}

/** The `data:` of each `event: next` in an SSE text, and what is left of an unfinished one. */
function takeEvents(buffer: string): { events: LiveEvent[]; rest: string } {
  const blocks = buffer.split('\n\n');
  const rest = blocks.pop() ?? '';
  const events: LiveEvent[] = [];
  for (const block of blocks) {
    const lines = block.split('\n');
    if (!lines.includes('event: next')) continue;
    const data = lines.find((line) => line.startsWith('data: '));
    if (data) events.push(JSON.parse(data.slice('data: '.length)) as LiveEvent);
  }
  return { events, rest };
}

/**
 * Follows `dataset` while `enabled`, calling `onChange` (at most every `quietMs`) once
 * changes have arrived; says whether the stream is live.
 */
export function useLiveChanges(
  apiKey: string,
  dataset: string,
  enabled: boolean,
  onChange: () => void,
  quietMs = 200,
): LiveState {
  const [state, setState] = useState<LiveState>(enabled ? 'connecting' : 'off');
  const changed = useRef(onChange);
  changed.current = onChange;

  useEffect(() => {
    if (!enabled) {
      setState('off');
      return;
    }
    const stop = new AbortController();
    let after: string | null = null;
    let timer: ReturnType<typeof setTimeout> | null = null;
    const notify = () => {
      timer ??= setTimeout(() => {
        timer = null;
        changed.current();
      }, quietMs);
    };

    const follow = async (): Promise<'again' | 'refused'> => {
      setState('connecting');
      const response = await fetch('/graphql', {
        method: 'POST',
        headers: {
          accept: 'text/event-stream',
          'content-type': 'application/json',
          authorization: `Bearer ${apiKey}`,
        },
        body: JSON.stringify({
          ...operationParams(ExplorerLiveChangesDocument),
          variables: { dataset, after },
        }),
        signal: stop.signal,
      });
      if (response.status === 401 || response.status === 403) return 'refused';
      if (!response.ok || !response.body) return 'again';
      setState('live');
      // Changes made before the stream opened (or while it was down): the timeline asks again.
      notify();
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return 'again';
        const { events, rest } = takeEvents(buffer + value);
        buffer = rest;
        for (const event of events) {
          const change = event.data?.datasetChanges;
          if (change) {
            after = change.cursor;
            notify();
          } else if (event.errors?.[0]?.extensions?.code === 'UNAUTHENTICATED') {
            return 'refused';
          }
        }
      }
    };

    void (async () => {
      while (!stop.signal.aborted) {
        const outcome = await follow().catch(() => 'again' as const);
        if (stop.signal.aborted) return;
        if (outcome === 'refused') {
          setState('refused');
          return;
        }
        setState('connecting');
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
      }
    })();
    return () => {
      stop.abort();
      if (timer) clearTimeout(timer);
    };
  }, [apiKey, dataset, enabled, quietMs]);

  return state;
}
