import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MCP_TOOLS } from '../../src/mcp/tools.js';
import { openTestGateway, type TestGateway } from '../helpers/gateway.js';
import { mcpClient } from '../helpers/mcp.js';

/**
 * What a model reads before its first call (docs/MCP.md, "Tools and scopes"): every tool's input
 * schema as `tools/list` lists it through the SDK's own client, walked at every depth
 * (properties, nested objects, array items). Each field is described; a time says its
 * format; an id its pattern; a number its bounds. A time and an id are recognised by name,
 * as the API names them: `asOf` and `*At` / `*From` / `*Until` are times, `*Id` / `*Ids`
 * and `supersedes` (a list of factIds) are ids.
 */

interface JsonSchema {
  type?: string | string[];
  description?: string;
  format?: string;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
}

const TIME_NAME = /^(asOf|.+At|.+From|.+Until)$/;
const ID_NAME = /^(.+Ids?|supersedes)$/;
const TIME_FORMATS = ['date-time', 'date'];

interface Walked {
  problems: string[];
  checked: { fields: number; times: number; ids: number; numbers: number };
}

/** Every problem of the tools' input schemas, and how many of each kind of field were checked. */
function walkSchemas(tools: Pick<Tool, 'name' | 'inputSchema'>[]): Walked {
  const walked: Walked = { problems: [], checked: { fields: 0, times: 0, ids: 0, numbers: 0 } };
  const { problems, checked } = walked;
  /** One field: `name` is its property's name (an array's items go by the array's). */
  const visit = (path: string, name: string, schema: JsonSchema) => {
    checked.fields++;
    if (!schema.description?.trim()) problems.push(`${path}: no description`);
    const types = [schema.type ?? []].flat();
    if (types.includes('array') && schema.items) visit(`${path}[]`, name, schema.items);
    if (types.includes('object')) children(path, schema);
    if (types.includes('string') && TIME_NAME.test(name)) {
      checked.times++;
      if (!TIME_FORMATS.includes(schema.format ?? ''))
        problems.push(`${path}: a time with no format`);
    }
    if (types.includes('string') && ID_NAME.test(name)) {
      checked.ids++;
      if (!schema.pattern) problems.push(`${path}: an id with no pattern`);
    }
    if (types.includes('number') || types.includes('integer')) {
      checked.numbers++;
      const low = schema.minimum ?? schema.exclusiveMinimum;
      const high = schema.maximum ?? schema.exclusiveMaximum;
      if (low === undefined || high === undefined)
        problems.push(`${path}: a number with no bounds`);
    }
  };
  const children = (path: string, schema: JsonSchema) => {
    for (const [name, property] of Object.entries(schema.properties ?? {})) {
      visit(`${path}.${name}`, name, property);
    }
  };
  for (const tool of tools) children(tool.name, tool.inputSchema as JsonSchema);
  for (const [kind, count] of Object.entries(checked)) {
    if (count === 0) problems.push(`found no ${kind} to check`);
  }
  return walked;
}

let t: TestGateway;
let listed: Tool[];

beforeAll(async () => {
  t = await openTestGateway();
  const client = await mcpClient(
    'http://gateway.test',
    await t.key('acme', ['read', 'write']),
    (r) => t.gateway.fetch(r),
  );
  ({ tools: listed } = await client.listTools());
  await client.close();
});

afterAll(() => t.database.close());

describe('tools/list: the input schemas a model reads', () => {
  it('lists every tool', () => {
    expect(listed.map((tool) => tool.name)).toEqual(MCP_TOOLS.map((tool) => tool.name));
  });

  it('every field described, every time with its format, every id with its pattern, every number with its bounds', () => {
    const { problems, checked } = walkSchemas(listed);
    expect(problems).toEqual([]);
    // What the walk found to check: at least the tools' time arguments, ids and numbers of
    // today (a walk that stops finding them passes nothing).
    expect(checked.times).toBeGreaterThanOrEqual(12);
    expect(checked.ids).toBeGreaterThanOrEqual(7);
    expect(checked.numbers).toBeGreaterThanOrEqual(12);
  });

  it('a time argument says what it means and how it is written', () => {
    const recall = listed.find((tool) => tool.name === 'recall')!.inputSchema.properties as Record<
      string,
      JsonSchema
    >;
    expect(recall.validAt).toMatchObject({ type: 'string', format: 'date-time' });
    expect(recall.validAt?.description).toMatch(/true in the world/);
    expect(recall.knownAt?.description).toMatch(/ISO 8601/);
    const confidence = (
      listed.find((tool) => tool.name === 'record_episode')!.inputSchema.properties as Record<
        string,
        JsonSchema
      >
    ).input?.properties?.facts?.items?.properties?.confidence;
    expect(confidence).toMatchObject({ minimum: 0, maximum: 1 });
  });

  it('the walk finds each kind of problem, and fails when it finds nothing to check', () => {
    const bad = walkSchemas([
      {
        name: 'bad',
        inputSchema: {
          type: 'object',
          properties: {
            nested: {
              type: 'object',
              description: 'an object',
              properties: { validAt: { type: 'string', description: 'when' } },
            },
            list: {
              type: 'array',
              description: 'a list',
              items: { type: 'object', properties: { memoryId: { type: 'string' } } },
            },
            score: { type: 'number', minimum: 0, description: 'a score' },
          },
        },
      },
    ]);
    expect(bad.problems).toEqual([
      'bad.nested.validAt: a time with no format',
      'bad.list[]: no description',
      'bad.list[].memoryId: no description',
      'bad.list[].memoryId: an id with no pattern',
      'bad.score: a number with no bounds',
    ]);
    expect(walkSchemas([{ name: 'empty', inputSchema: { type: 'object' } }]).problems).toEqual([
      'found no fields to check',
      'found no times to check',
      'found no ids to check',
      'found no numbers to check',
    ]);
  });
});
