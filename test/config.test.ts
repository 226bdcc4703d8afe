import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';

function configError(env: NodeJS.ProcessEnv): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error(`expected a ConfigError for ${JSON.stringify(env)}`);
}

describe('loadConfig', () => {
  it('gives the defaults for an empty environment', () => {
    const config = loadConfig({});
    expect(config).toEqual({
      PORT: 3004,
      HOST: '127.0.0.1',
      MONGODB_DB: 'memory_gateway',
      DATA_DIR: './data',
      LOG_LEVEL: 'info',
      NODE_ENV: 'development',
      GRAPHQL_INTROSPECTION: true,
      GRAPHIQL: true,
      RATE_LIMIT_PER_MINUTE: 1200,
      RATE_LIMIT_PER_ADDRESS_PER_MINUTE: 3600,
      HEADERS_TIMEOUT_MS: 10000,
      REQUEST_TIMEOUT_MS: 30000,
      KEEP_ALIVE_TIMEOUT_MS: 5000,
      BODY_LIMIT_BYTES: 1048576,
      DB_TIMEOUT_MS: 5000,
      WORKSPACE_QUEUE: 32,
      DB_COMMAND_METRICS: false,
      CACHE_TTL_MS: 5000,
      KEY_USE_FLUSH_MS: 60000,
      RATE_LIMIT_STORE_TIMEOUT_MS: 200,
      TRUSTED_DOCUMENTS: 'also',
      EMBEDDINGS: 'on',
      OTEL_SERVICE_NAME: 'memory-gateway',
      LIVE_POLL_MS: 1000,
      LIVE_STREAMS: 1000,
      LIVE_STREAMS_PER_KEY: 20,
      LIVE_CONNECTIONS_PER_KEY: 20,
      LIVE_CONNECTIONS_PER_ADDRESS: 100,
      LIVE_BUFFER: 1000,
      SHUTDOWN_TIMEOUT_MS: 10000,
      CORS_ORIGINS: '*',
      ALLOWED_HOSTS: ['localhost', '127.0.0.1', '[::1]'],
    });
    expect(config.MONGODB_URI).toBeUndefined();
  });

  it('CORS_ORIGINS: * in development, none in production, or a list of exact origins', () => {
    expect(loadConfig({ NODE_ENV: 'production' }).CORS_ORIGINS).toEqual([]);
    expect(loadConfig({ NODE_ENV: 'production', CORS_ORIGINS: '*' }).CORS_ORIGINS).toBe('*');
    expect(
      loadConfig({ CORS_ORIGINS: 'https://app.example.com, http://localhost:5173' }).CORS_ORIGINS,
    ).toEqual(['https://app.example.com', 'http://localhost:5173']);
    for (const bad of [
      'app.example.com',
      'https://app.example.com/',
      'ftp://x.example',
      'https://a.example/path',
    ]) {
      expect(() => loadConfig({ CORS_ORIGINS: bad })).toThrow(
        /CORS_ORIGINS=.* must be \* or origins/,
      );
    }
  });

  it('ALLOWED_HOSTS: the loopback names and HOST by default, or a list, or *', () => {
    expect(loadConfig({ HOST: 'devbox.local' }).ALLOWED_HOSTS).toEqual([
      'localhost',
      '127.0.0.1',
      '[::1]',
      'devbox.local',
    ]);
    // A wildcard address is not a name a browser sends.
    expect(loadConfig({ HOST: '0.0.0.0' }).ALLOWED_HOSTS).toEqual([
      'localhost',
      '127.0.0.1',
      '[::1]',
    ]);
    expect(loadConfig({ HOST: '::1' }).ALLOWED_HOSTS).toEqual(['localhost', '127.0.0.1', '[::1]']);
    expect(loadConfig({ ALLOWED_HOSTS: 'Gateway.Example., 10.0.0.5, ::1' }).ALLOWED_HOSTS).toEqual([
      'gateway.example',
      '10.0.0.5',
      '[::1]',
    ]);
    expect(loadConfig({ ALLOWED_HOSTS: '*' }).ALLOWED_HOSTS).toBe('*');
    for (const bad of ['a.example:8080', 'http://a.example', 'a b']) {
      expect(() => loadConfig({ ALLOWED_HOSTS: bad })).toThrow(
        /ALLOWED_HOSTS=.* must be \* or host names/,
      );
    }
  });

  it('turns introspection and GraphiQL off in production unless enabled', () => {
    expect(loadConfig({ NODE_ENV: 'production' })).toMatchObject({
      GRAPHQL_INTROSPECTION: false,
      GRAPHIQL: false,
    });
    expect(
      loadConfig({ NODE_ENV: 'production', GRAPHQL_INTROSPECTION: 'true', GRAPHIQL: 'true' }),
    ).toMatchObject({
      GRAPHQL_INTROSPECTION: true,
      GRAPHIQL: true,
    });
    expect(loadConfig({ GRAPHIQL: 'false' }).GRAPHIQL).toBe(false);
    expect(() => loadConfig({ GRAPHIQL: 'yes' })).toThrow(/GRAPHIQL="yes" must be true or false/);
    expect(() => loadConfig({ RATE_LIMIT_PER_MINUTE: '-1' })).toThrow(/RATE_LIMIT_PER_MINUTE/);
    expect(() => loadConfig({ HEADERS_TIMEOUT_MS: '20000', REQUEST_TIMEOUT_MS: '10000' })).toThrow(
      /REQUEST_TIMEOUT_MS=10000 must be at least HEADERS_TIMEOUT_MS/,
    );
    expect(loadConfig({ DB_COMMAND_METRICS: 'true' }).DB_COMMAND_METRICS).toBe(true);
    expect(() => loadConfig({ DB_COMMAND_METRICS: 'yes' })).toThrow(
      /DB_COMMAND_METRICS="yes" must be true or false/,
    );
    expect(() => loadConfig({ CACHE_TTL_MS: '-5' })).toThrow(
      /CACHE_TTL_MS="-5" must be between 0 and 600000/,
    );
    expect(() => loadConfig({ CACHE_TTL_MS: '5s' })).toThrow(/CACHE_TTL_MS="5s" must be a number/);
    expect(() => loadConfig({ TRUSTED_DOCUMENTS: 'some' })).toThrow(/TRUSTED_DOCUMENTS/);
    expect(() => loadConfig({ EMBEDDINGS: 'yes' })).toThrow(/EMBEDDINGS/);
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(
      /OTEL_EXPORTER_OTLP_ENDPOINT/,
    );
    expect(() => loadConfig({ DB_TIMEOUT_MS: 'soon' })).toThrow(
      /DB_TIMEOUT_MS="soon" must be a number/,
    );
  });

  it('reads every variable when set', () => {
    expect(
      loadConfig({
        PORT: '8080',
        HOST: '0.0.0.0',
        MONGODB_URI: 'mongodb+srv://user:pw@cluster.example.net/',
        MONGODB_DB: 'gateway_prod',
        DATA_DIR: '/var/lib/gateway',
        LOG_LEVEL: 'debug',
        NODE_ENV: 'production',
        RATE_LIMIT_PER_MINUTE: '0',
        RATE_LIMIT_PER_ADDRESS_PER_MINUTE: '0',
        RATE_LIMIT_STORE: 'process',
        RATE_LIMIT_STORE_TIMEOUT_MS: '50',
        HEADERS_TIMEOUT_MS: '2000',
        REQUEST_TIMEOUT_MS: '3000',
        KEEP_ALIVE_TIMEOUT_MS: '4000',
        BODY_LIMIT_BYTES: '2048',
        DB_TIMEOUT_MS: '500',
        WORKSPACE_CONCURRENCY: '2',
        WORKSPACE_QUEUE: '5',
        CACHE_TTL_MS: '0',
        KEY_USE_FLUSH_MS: '0',
        TRUSTED_DOCUMENTS: 'only',
        EMBEDDINGS: 'off',
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_SERVICE_NAME: 'gateway-eu',
        DB_COMMAND_METRICS: 'true',
        LIVE_POLL_MS: '250',
        LIVE_STREAMS: '10',
        LIVE_STREAMS_PER_KEY: '2',
        LIVE_CONNECTIONS_PER_KEY: '3',
        LIVE_CONNECTIONS_PER_ADDRESS: '0',
        LIVE_BUFFER: '50',
        SHUTDOWN_TIMEOUT_MS: '0',
      }),
    ).toEqual({
      NODE_ENV: 'production',
      GRAPHQL_INTROSPECTION: false,
      GRAPHIQL: false,
      RATE_LIMIT_PER_MINUTE: 0,
      RATE_LIMIT_PER_ADDRESS_PER_MINUTE: 0,
      RATE_LIMIT_STORE: 'process',
      RATE_LIMIT_STORE_TIMEOUT_MS: 50,
      HEADERS_TIMEOUT_MS: 2000,
      REQUEST_TIMEOUT_MS: 3000,
      KEEP_ALIVE_TIMEOUT_MS: 4000,
      BODY_LIMIT_BYTES: 2048,
      DB_TIMEOUT_MS: 500,
      WORKSPACE_CONCURRENCY: 2,
      WORKSPACE_QUEUE: 5,
      CACHE_TTL_MS: 0,
      KEY_USE_FLUSH_MS: 0,
      TRUSTED_DOCUMENTS: 'only',
      EMBEDDINGS: 'off',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_SERVICE_NAME: 'gateway-eu',
      DB_COMMAND_METRICS: true,
      LIVE_POLL_MS: 250,
      LIVE_STREAMS: 10,
      LIVE_STREAMS_PER_KEY: 2,
      LIVE_CONNECTIONS_PER_KEY: 3,
      LIVE_CONNECTIONS_PER_ADDRESS: 0,
      LIVE_BUFFER: 50,
      SHUTDOWN_TIMEOUT_MS: 0,
      PORT: 8080,
      HOST: '0.0.0.0',
      MONGODB_URI: 'mongodb+srv://user:pw@cluster.example.net/',
      MONGODB_DB: 'gateway_prod',
      DATA_DIR: '/var/lib/gateway',
      LOG_LEVEL: 'debug',
      CORS_ORIGINS: [],
      ALLOWED_HOSTS: ['localhost', '127.0.0.1', '[::1]'],
    });
    expect(loadConfig({ MONGODB_URI: 'mongodb://127.0.0.1:27017' }).MONGODB_URI).toBe(
      'mongodb://127.0.0.1:27017',
    );
    expect(loadConfig({ PORT: '0' }).PORT).toBe(0);
    expect(loadConfig({ PORT: '65535' }).PORT).toBe(65535);
  });

  it('ignores variables it does not know', () => {
    expect(loadConfig({ PATH: '/usr/bin', UNRELATED: 'x' }).PORT).toBe(3004);
  });

  it('treats empty strings as unset', () => {
    expect(
      loadConfig({
        PORT: '',
        HOST: '',
        MONGODB_URI: '',
        MONGODB_DB: '',
        DATA_DIR: '',
        LOG_LEVEL: '',
      }),
    ).toEqual(loadConfig({}));
  });

  it.each([
    { name: 'PORT', value: 'abc', reason: 'must be a number' },
    { name: 'PORT', value: '70000', reason: 'must be between 0 and 65535' },
    { name: 'PORT', value: '-1', reason: 'must be between 0 and 65535' },
    { name: 'PORT', value: '80.5', reason: 'must be a whole number' },
    // Number(' ') is 0 and Number('0x10') is 16: neither may silently pick a port.
    { name: 'PORT', value: ' ', reason: 'must be a number' },
    { name: 'PORT', value: '0x10', reason: 'must be a number' },
    {
      name: 'MONGODB_URI',
      value: 'http://x',
      reason: 'must start with mongodb:// or mongodb+srv://',
    },
    { name: 'LOG_LEVEL', value: 'loud', reason: 'info' },
    { name: 'MONGODB_DB', value: 'a/b', reason: 'must be a MongoDB database name' },
    { name: 'MONGODB_DB', value: 'x'.repeat(64), reason: 'must be a MongoDB database name' },
  ])('rejects $name=$value naming the variable and the reason', ({ name, value, reason }) => {
    const error = configError({ [name]: value });
    expect(error.name).toBe('ConfigError');
    expect(error.message).toContain(`${name}=${JSON.stringify(value)}`);
    expect(error.message).toContain(reason);
    // One message, no stack-like noise from the validator.
    expect(error.message.split('\n')).toHaveLength(1);
  });

  it('names the bad variable even when others are fine', () => {
    const error = configError({ PORT: '3005', LOG_LEVEL: 'loud', DATA_DIR: '/tmp/x' });
    expect(error.message).toMatch(/^Invalid configuration: LOG_LEVEL="loud" /);
    expect(error.message).not.toContain('PORT');
  });
});
