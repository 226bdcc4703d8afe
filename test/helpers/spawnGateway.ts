import { type ChildProcess, spawn } from 'node:child_process';

const ROOT = new URL('../../', import.meta.url);

export interface SpawnedGateway {
  child: ChildProcess;
  port: number;
  /** Everything the process printed so far (stdout and stderr: its log lines). */
  output: () => string;
}

/**
 * A gateway as `npm start` runs it (`src/main.ts`), in a process of its own on a free
 * loopback port, with `env` over this process's environment: for tests that need real
 * processes (signals, several replicas on one database). Resolves once it listens.
 */
export async function spawnGateway(env: Record<string, string>): Promise<SpawnedGateway> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', ...env },
  });
  let output = '';
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway did not start:\n${output}`)), 60_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
  });
  return { child, port, output: () => output };
}
