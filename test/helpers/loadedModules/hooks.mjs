// Module hooks (node:module register) that write every module a process resolves to stderr,
// one `resolved <url>` line each: what a test reads to see what a start loads.
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  process.stderr.write(`resolved ${resolved.url}\n`);
  return resolved;
}
