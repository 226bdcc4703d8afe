import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { DEMO_DATASET } from '../src/demo/seed.js';
import { listen } from '../src/http/server.js';
import { serveGraphqlWebSocket } from '../src/http/webSocket.js';
import { type FairnessOptions, fairnessArgs, tally, withFairnessStore } from './fairness.js';
import { round1, round2 } from './measure.js';

/**
 * One workspace's heavy load over each transport, against another workspace's light reads
 * over HTTP, on one gateway behind a loopback listener (the WebSocket transport attached,
 * as `npm start` serves it). Three phases in one run: the light reads alone, then beside
 * `--clients` concurrent loops of a heavy GraphQL query over HTTP, then beside the same
 * loops over one graphql-ws connection. Reported: the light reads' p50 and p90 in each
 * phase and their ratio to the reads alone, and what became of the heavy operations (ran,
 * refused RATE_LIMITED by the workspace's fairness limit, or otherwise). Every operation,
 * whatever carries it, takes one of its workspace's WORKSPACE_CONCURRENCY slots, so the
 * light workspace's ratios should be alike for both transports.
 *
 *   npm run bench:fairness:transports [-- --facts 5000 --clients 10 --seconds 6 --db-timeout 1500]
 *     [--concurrency N]   (the gateway's WORKSPACE_CONCURRENCY; 0: no limit)
 *     [--index-served]    (the database with the store's scalar declarations, as `npm start`)
 *
 * docs/PERFORMANCE.md ("Fairness over every transport") records a run.
 */

/** The heavy workspace's operation: a full-history page of 100 facts of its big dataset, counted. */
const HEAVY_QUERY = `query Heavy { dataset(name: "big") {
  facts(first: 100, includeInvalidated: true) { totalCount edges { node { factId subject predicate object validAt } } }
} }`;

interface Percentiles {
  p50: number;
  p90: number;
  count: number;
}

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? Number.NaN : s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
};
const percentiles = (xs: number[]): Percentiles => ({
  p50: round1(percentile(xs, 0.5)),
  p90: round1(percentile(xs, 0.9)),
  count: xs.length,
});

export interface TransportFairnessReport {
  light: { alone: Percentiles; heavyOverHttp: Percentiles; heavyOverWebSocket: Percentiles };
  /** The light reads' p50 and p90 under each load, as a ratio to the reads alone. */
  ratios: {
    heavyOverHttp: { p50: number; p90: number };
    heavyOverWebSocket: { p50: number; p90: number };
  };
  /** The heavy operations by outcome: `ok`, or the code they were refused or failed with. */
  heavy: { overHttp: Record<string, number>; overWebSocket: Record<string, number> };
  lightStatuses: Record<string, number>;
}

export function runTransportFairness(options: FairnessOptions): Promise<TransportFairnessReport> {
  const log = options.log ?? (() => {});
  return withFairnessStore(options, async ({ gateway, heavyKey, lightKey }) => {
    const server = await new Promise<Server>((resolve) => {
      const s = listen(gateway.fetch, { port: 0, hostname: '127.0.0.1' }, () => resolve(s));
    });
    const webSocket = serveGraphqlWebSocket(server, gateway);
    const { port } = server.address() as AddressInfo;
    const origin = `http://127.0.0.1:${port}`;
    const lightStatuses: number[] = [];
    try {
      /** The light workspace's list, one after another, until `until`. */
      const lightReads = async (until: number, atLeast: number) => {
        const times: number[] = [];
        while (performance.now() < until || times.length < atLeast) {
          const started = performance.now();
          const response = await fetch(
            `${origin}/v1/memory/semantic/datasets/${DEMO_DATASET}/facts`,
            { headers: { authorization: `Bearer ${lightKey}` } },
          );
          await response.arrayBuffer();
          times.push(performance.now() - started);
          lightStatuses.push(response.status);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        return times;
      };
      const codeOf = (errors: readonly { extensions?: Record<string, unknown> }[] | undefined) =>
        errors?.length ? String(errors[0]?.extensions?.code ?? 'error') : 'ok';
      const heavyOverHttp = async () => {
        const response = await fetch(`${origin}/graphql`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${heavyKey}`,
            'content-type': 'application/json',
            accept: 'application/graphql-response+json',
          },
          body: JSON.stringify({ query: HEAVY_QUERY }),
        });
        return codeOf(((await response.json()) as { errors?: [] }).errors);
      };
      const client = createClient({
        url: `ws://127.0.0.1:${port}/graphql`,
        webSocketImpl: WebSocket,
        connectionParams: { authorization: `Bearer ${heavyKey}` },
        retryAttempts: 0,
      });
      const heavyOverWebSocket = () =>
        new Promise<string>((resolve) => {
          let outcome = 'ok';
          client.subscribe(
            { query: HEAVY_QUERY },
            {
              next: (result) => {
                outcome = codeOf(result.errors as never);
              },
              // Refused before it ran: graphql-ws's error message, with the gateway's code.
              error: (error) =>
                resolve(Array.isArray(error) ? codeOf(error) : `closed: ${String(error)}`),
              complete: () => resolve(outcome),
            },
          );
        });

      /** The light reads while `clients` loops of `heavy` run for the phase's seconds. */
      const phase = async (name: string, heavy: (() => Promise<string>) | null) => {
        log(`${name}: ${options.seconds} s`);
        const until = performance.now() + options.seconds * 1000;
        const outcomes: string[] = [];
        const [times] = await Promise.all([
          lightReads(until, 20),
          ...(heavy
            ? Array.from({ length: options.clients }, async () => {
                while (performance.now() < until) outcomes.push(await heavy());
              })
            : []),
        ]);
        return { light: percentiles(times), heavy: tally(outcomes) };
      };
      const alone = await phase('light reads alone', null);
      const overHttp = await phase('heavy over HTTP', heavyOverHttp);
      const overWebSocket = await phase('heavy over WebSocket', heavyOverWebSocket);
      await client.dispose();
      const ratio = (under: Percentiles) => ({
        p50: round2(under.p50 / alone.light.p50),
        p90: round2(under.p90 / alone.light.p90),
      });
      return {
        light: {
          alone: alone.light,
          heavyOverHttp: overHttp.light,
          heavyOverWebSocket: overWebSocket.light,
        },
        ratios: {
          heavyOverHttp: ratio(overHttp.light),
          heavyOverWebSocket: ratio(overWebSocket.light),
        },
        heavy: { overHttp: overHttp.heavy, overWebSocket: overWebSocket.heavy },
        lightStatuses: tally(lightStatuses),
      };
    } finally {
      gateway.beginShutdown();
      await webSocket.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
}

if (process.argv[1]?.endsWith('fairnessTransports.ts')) {
  // By default the heavy list is scanned, as a query shape no index serves is: heavy in the
  // database. --index-served: with the store's declarations, as `npm start` runs.
  const report = await runTransportFairness(
    fairnessArgs(import.meta.url, {
      facts: 5000,
      seconds: 6,
      dbTimeoutMs: 1500,
      indexServedByDefault: false,
    }),
  );
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
}
