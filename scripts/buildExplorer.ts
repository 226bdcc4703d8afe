import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { build } from 'esbuild';
import { parseCommandLine } from '../src/cli/help.js';

/**
 * The memory explorer's browser bundle (explorer/src → explorer/build/explorer.js and
 * explorer.css), minified, with every library inside it: the gateway serves these two
 * files itself at /explorer/assets/ (src/http/explorer.ts), so the page needs no CDN.
 * Part of `npm run build`; the test run builds it once in its global setup.
 *
 * Each file is written beside its final name and renamed over it, so a gateway serving
 * the bundle while another build runs never reads half a file, and explorer/build is
 * never emptied (`npm run build` empties dist/, not this folder).
 */
const ROOT = new URL('../', import.meta.url);
export const EXPLORER_BUILD_DIR = new URL('explorer/build/', ROOT).pathname;

export interface ExplorerBundle {
  /** Bytes of each file written, by name. */
  sizes: Record<string, number>;
}

export async function buildExplorer(): Promise<ExplorerBundle> {
  const result = await build({
    entryPoints: [new URL('explorer/src/main.tsx', ROOT).pathname],
    outfile: join(EXPLORER_BUILD_DIR, 'explorer.js'),
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: ['chrome110', 'firefox115', 'safari16'],
    jsx: 'automatic',
    define: { 'process.env.NODE_ENV': '"production"' },
    legalComments: 'eof',
    write: false,
    logLevel: 'warning',
  });
  mkdirSync(EXPLORER_BUILD_DIR, { recursive: true });
  const sizes: Record<string, number> = {};
  for (const file of result.outputFiles) {
    const name = basename(file.path);
    const temporary = `${file.path}.${process.pid}.tmp`;
    writeFileSync(temporary, file.contents);
    renameSync(temporary, file.path);
    sizes[name] = file.contents.byteLength;
  }
  return { sizes };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  parseCommandLine(
    import.meta.url,
    { options: {} },
    "Usage: node --import tsx scripts/buildExplorer.ts\n\nBuilds the memory explorer's bundle into explorer/build/ (also part of `npm run build`). It takes no options.",
  );
  const { sizes } = await buildExplorer();
  for (const [name, bytes] of Object.entries(sizes)) {
    process.stdout.write(`explorer/build/${name}: ${(bytes / 1024).toFixed(1)} KiB\n`);
  }
}
