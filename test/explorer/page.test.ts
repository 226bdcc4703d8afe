import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { createGateway } from '../../src/http/app.js';
import { readDoc } from '../helpers/docs.js';
import { openTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * How the gateway serves the memory explorer (src/http/explorer.ts): the page, its two
 * assets and nothing else, a policy that keeps the page to this gateway, and the
 * development key only where GraphiQL gets it (embedded store, loopback Host). The
 * bundle is built by the run's global setup (test/setup/explorer.ts).
 */

const DEVELOPMENT_KEY = 'mk_development_key_for_this_test';
let t: TestGateway;
let withKey: ReturnType<typeof createGateway>;

beforeAll(async () => {
  t = await openTestGateway();
  withKey = createGateway({ database: t.database, developmentKey: DEVELOPMENT_KEY });
});

/** The page for `host`, from a loopback peer (the socket's address, as a local browser's). */
const page = (gateway: ReturnType<typeof createGateway>, host: string) =>
  gateway.fetch(new Request(`http://${host}/explorer`, { headers: { accept: 'text/html' } }), {
    incoming: { socket: { remoteAddress: '127.0.0.1' } },
  });

/** The JSON the page hands the script. */
async function pageConfig(response: Response): Promise<{ developmentKey: string | null }> {
  const html = await response.text();
  const json = /<script type="application\/json" id="explorer-config">(.*?)<\/script>/s.exec(html);
  expect(json, 'the page carries its config').not.toBeNull();
  return JSON.parse(json![1]!);
}

describe('/explorer', () => {
  it('serves the page with a policy that lets it load and call only this gateway', async () => {
    const response = await page(t.gateway, 'gateway.test');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    const policy = response.headers.get('content-security-policy') ?? '';
    for (const directive of [
      "default-src 'none'",
      "script-src 'self'",
      "style-src 'self'",
      "connect-src 'self'",
      "frame-ancestors 'none'",
    ]) {
      expect(policy).toContain(directive);
    }
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(await pageConfig(response)).toEqual({ developmentKey: null });
  });

  it('prefills the development key for a loopback Host (from a loopback peer) only, like GraphiQL', async () => {
    for (const host of ['127.0.0.1:4000', 'localhost:4000', '[::1]:4000']) {
      expect(await pageConfig(await page(withKey, host)), host).toEqual({
        developmentKey: DEVELOPMENT_KEY,
      });
    }
    for (const host of ['gateway.test', 'memory.example.com', '10.0.0.5:4000']) {
      const response = await page(withKey, host);
      expect(await pageConfig(response), host).toEqual({ developmentKey: null });
    }
  });

  it('serves its script and style sheet, and nothing else under its assets', async () => {
    const script = await t.request('/explorer/assets/explorer.js');
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect((await script.text()).length).toBeGreaterThan(10_000);
    const style = await t.request('/explorer/assets/explorer.css');
    expect(style.status).toBe(200);
    expect(style.headers.get('content-type')).toBe('text/css; charset=utf-8');
    for (const path of [
      '/explorer/assets/explorer.js.tmp',
      '/explorer/assets/..%2F..%2Fpackage.json',
      '/explorer/assets/%2E%2E%2Fsrc%2Fmain.tsx',
      '/explorer/assets/',
    ]) {
      const response = await t.request(path);
      expect(response.status, path).toBe(404);
    }
  });
});

describe('the bundle sizes docs/EXPLORER.md records', () => {
  const readme = readDoc('EXPLORER.md');
  it.each(['explorer.js', 'explorer.css'])('%s is within 10 %% of its row there', (file) => {
    const row = new RegExp(`^\\| \`${file}\` \\| ([\\d.]+) KiB \\| ([\\d.]+) KiB \\|$`, 'm').exec(
      readme,
    );
    expect(row, `docs/EXPLORER.md's table has a row for ${file}`).not.toBeNull();
    const built = readFileSync(new URL(`../../explorer/build/${file}`, import.meta.url));
    const kib = (bytes: number) => bytes / 1024;
    expect(kib(built.byteLength)).toBeGreaterThan(Number(row![1]) * 0.9);
    expect(kib(built.byteLength)).toBeLessThan(Number(row![1]) * 1.1);
    expect(kib(gzipSync(built).byteLength)).toBeGreaterThan(Number(row![2]) * 0.9);
    expect(kib(gzipSync(built).byteLength)).toBeLessThan(Number(row![2]) * 1.1);
  });
});
