import { existsSync } from 'node:fs';
import sparticuzChromium from '@sparticuz/chromium';
import { type Browser, chromium } from 'playwright-core';

/**
 * Headless Chromium for the browser tests, with no download at test time: the binary
 * ships inside the @sparticuz/chromium npm package (`npm ci` brings it), or a system
 * Chromium when CHROMIUM_PATH names one. Deliberately no skip: without a browser the
 * browser tests fail.
 *
 * Not the package's own argument list: it turns web security off (no same-origin policy,
 * no CORS), which the cross-origin tests exist to check.
 */
export const PAGE_TIMEOUT = 60_000;

const ARGS = [
  '--no-sandbox',
  '--no-zygote',
  '--disable-gpu',
  '--use-gl=angle',
  '--use-angle=swiftshader',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

export async function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  const configured = process.env.CHROMIUM_PATH;
  if (configured && !existsSync(configured)) {
    throw new Error(`CHROMIUM_PATH=${configured} does not exist`);
  }
  const executablePath = configured ?? (await sparticuzChromium.executablePath());
  return chromium.launch({
    executablePath,
    headless: true,
    timeout: PAGE_TIMEOUT,
    args: [...ARGS, ...extraArgs],
  });
}
