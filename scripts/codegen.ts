import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { codegen } from '@graphql-codegen/core';
import * as typedDocumentNode from '@graphql-codegen/typed-document-node';
import * as typescriptOperations from '@graphql-codegen/typescript-operations';
import { parse } from 'graphql';
import config from '../codegen.ts';

const PLUGINS = {
  'typescript-operations': typescriptOperations,
  'typed-document-node': typedDocumentNode,
};

/** Every `.graphql` operation document under the given folders, in a stable order. */
function documents(root: string, folders: string[]) {
  return folders
    .flatMap((folder) =>
      (readdirSync(join(root, folder), { recursive: true }) as string[])
        .filter((file) => file.endsWith('.graphql'))
        .map((file) => join(folder, file)),
    )
    .sort()
    .map((location) => ({ location, document: parse(readFileSync(join(root, location), 'utf8')) }));
}

/** The generated files' contents, computed without writing anything. */
export async function generateFiles(
  root = process.cwd(),
): Promise<{ filename: string; content: string }[]> {
  const schema = parse(readFileSync(join(root, config.schema), 'utf8'));
  return Promise.all(
    Object.entries(config.generates).map(async ([filename, output]) => ({
      filename,
      content: await codegen({
        filename,
        schema,
        documents: documents(root, output.documentFolders),
        config: output.config,
        plugins: output.plugins.map((name) => ({ [name]: {} })),
        pluginMap: PLUGINS,
      }),
    })),
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const { filename, content } of await generateFiles()) {
    mkdirSync(dirname(filename), { recursive: true });
    writeFileSync(filename, content);
    process.stdout.write(`Wrote ${filename}\n`);
  }
}
