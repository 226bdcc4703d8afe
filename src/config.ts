import { z } from 'zod';

/**
 * Configuration from the environment, parsed once at start. A bad value stops start-up
 * with one message naming the variable and what is wrong.
 */
const schema = z.object({
  // A plain decimal number: a bare z.coerce.number() would read " " as 0 (a random port)
  // and "0x10" as 16.
  PORT: z
    .string()
    .trim()
    .regex(/^[+-]?(\d+\.?\d*|\.\d+)$/, 'must be a number')
    .pipe(
      z.coerce
        .number<string>()
        .int('must be a whole number')
        .min(0, 'must be between 0 and 65535')
        .max(65535, 'must be between 0 and 65535'),
    )
    .default(3004),
  HOST: z.string().min(1, 'must not be empty').default('127.0.0.1'),
  MONGODB_URI: z
    .string()
    .regex(/^mongodb(\+srv)?:\/\//, 'must start with mongodb:// or mongodb+srv://')
    .optional(),
  MONGODB_DB: z
    .string()
    .regex(
      /^[^/\\. "$*<>:|?]{1,63}$/,
      'must be a MongoDB database name (1-63 characters, none of /\\. "$*<>:|?)',
    )
    .default('memory_gateway'),
  DATA_DIR: z.string().min(1, 'must not be empty').default('./data'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export type Config = z.output<typeof schema>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Parses the environment; empty strings count as unset. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const raw = Object.fromEntries(
    Object.keys(schema.shape).map((key) => [key, env[key] === '' ? undefined : env[key]]),
  );
  const result = schema.safeParse(raw);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const variable = String(issue.path[0]);
    throw new ConfigError(
      `Invalid configuration: ${variable}=${JSON.stringify(env[variable])} ${issue.message}.`,
    );
  }
  return result.data;
}
