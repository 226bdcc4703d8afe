import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generateFiles } from '../../scripts/codegen.js';
import { printSortedSchema } from '../../src/schema/index.js';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

describe('generated files are current', () => {
  it('schema.graphql is the schema printed sorted (run `npm run schema`)', () => {
    expect(read('schema.graphql')).toBe(printSortedSchema());
  });

  it('every codegen output (src/generated, test/generated, explorer/src/generated, the trusted documents) is what codegen prints (run `npm run codegen`)', async () => {
    const outputs = await generateFiles();
    expect(outputs.map((output) => output.filename).sort()).toEqual([
      'explorer/src/generated/documentHashes.ts',
      'explorer/src/generated/operations.ts',
      'src/generated/operations.ts',
      'src/generated/trustedDocuments.ts',
      'test/generated/operations.ts',
    ]);
    for (const output of outputs)
      expect(read(output.filename), output.filename).toBe(output.content);
  });
});
