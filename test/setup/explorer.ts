import { buildExplorer } from '../../scripts/buildExplorer.ts';

/**
 * The memory explorer's bundle, built once before the run: its browser tests load it from
 * the gateway, which serves explorer/build. Written file by file with a rename, so the
 * `npm run build` that test/embedded/start.test.ts runs meanwhile never leaves it half
 * written.
 */
export async function setup(): Promise<void> {
  await buildExplorer();
}
