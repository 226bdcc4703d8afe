import { serve } from '@hono/node-server';
import { ConfigError, loadConfig } from './config.js';
import { DEMO_DATASET, ensureDevelopmentData } from './demo/seed.js';
import { EmbeddedDbError } from './embedded/ferretdb.js';
import { createGateway } from './http/app.js';
import { openStore } from './openStore.js';

/**
 * `npm start`: loads the configuration, opens the store (MONGODB_URI, or the embedded
 * FerretDB under DATA_DIR with demo data on first start), serves the gateway, and shuts
 * everything down in order on SIGINT / SIGTERM.
 */
const say = (line: string) => process.stdout.write(`${line}\n`);

async function main(): Promise<void> {
  const config = loadConfig();
  const store = await openStore(config, 'server', (line) => process.stderr.write(`${line}\n`));
  const devKey = store.embedded
    ? await ensureDevelopmentData(store.database.collections, config.DATA_DIR)
    : null;

  const gateway = createGateway({
    database: store.database,
    ...(devKey ? { graphiqlHeaders: { Authorization: `Bearer ${devKey}` } } : {}),
  });
  const server = serve(
    { fetch: gateway.fetch, port: config.PORT, hostname: config.HOST },
    (info) => {
      const base = `http://${info.family === 'IPv6' ? `[${info.address}]` : info.address}:${info.port}`;
      say(`Memory gateway listening on ${base}`);
      say(`  GraphQL / GraphiQL: ${base}/graphql`);
      say(`  Health:             ${base}/healthz  ${base}/readyz`);
      if (store.embedded) {
        say(
          `  Database:           embedded FerretDB (${store.embedded.uri}), files in ${config.DATA_DIR}`,
        );
      } else {
        say('  Database:           MONGODB_URI');
      }
      if (devKey) {
        say(`  Development key (workspace "development", scopes read,write,admin):`);
        say(`    ${devKey}`);
        say(
          `  Try: curl -H "Authorization: Bearer ${devKey}" -H "Content-Type: application/json" \\`,
        );
        say(
          `         -d '{"query":"{ dataset(name: \\"${DEMO_DATASET}\\") { facts { totalCount } } }"}' ${base}/graphql`,
        );
      }
    },
  );

  let stopping = false;
  const shutdown = async (code: number) => {
    if (stopping) return;
    stopping = true;
    await new Promise<void>((done) => server.close(() => done()));
    await store.close();
    process.exit(code);
  };
  process.once('SIGINT', () => void shutdown(0));
  process.once('SIGTERM', () => void shutdown(0));
  if (store.embedded?.owned) {
    void store.embedded.exited.then((code) => {
      if (stopping) return;
      process.stderr.write(`The embedded database exited unexpectedly (code ${code}); stopping.\n`);
      void shutdown(1);
    });
  }
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError || error instanceof EmbeddedDbError) {
    process.stderr.write(`${error.message}\n`);
  } else {
    process.stderr.write(
      `Failed to start: ${error instanceof Error ? error.stack : String(error)}\n`,
    );
  }
  process.exit(1);
});
