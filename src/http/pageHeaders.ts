/**
 * The headers of a page the gateway serves (GraphiQL, the explorer, the API docs): it loads
 * and calls nothing but this gateway (`default-src 'none'`, then the page's own
 * `directives`), is never framed (a page on another origin could not click for its user),
 * sends no referrer and is not sniffed. A page that may hold a key is never stored by a
 * cache (`noStore`).
 */
export function pageHeaders(
  directives: string[],
  options: { formAction: "'none'" | "'self'"; noStore: boolean },
): Record<string, string> {
  return {
    'content-security-policy': [
      "default-src 'none'",
      ...directives,
      "base-uri 'none'",
      `form-action ${options.formAction}`,
      "frame-ancestors 'none'",
    ].join('; '),
    ...(options.noStore ? { 'cache-control': 'no-store' } : {}),
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
  };
}
