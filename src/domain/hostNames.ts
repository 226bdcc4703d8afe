/**
 * Host names as the gateway compares them: lower-cased, without port or trailing dot,
 * IPv6 ones in brackets. The configuration reads ALLOWED_HOSTS with these rules and the
 * edge (src/http/hosts.ts) reads each request's `Host` with them.
 */

/** The names every embedded gateway answers to: the loopback ones. */
export const LOOPBACK_HOSTS = ['localhost', '127.0.0.1', '[::1]'] as const;

/** A configured host (`example.com`, `::1`, `[::1]`) in the form requestHostName gives. */
export function normalizeHostName(name: string): string | null {
  const trimmed = name.trim();
  if (!trimmed) return null;
  const bracketed = trimmed.includes(':') && !trimmed.startsWith('[') ? `[${trimmed}]` : trimmed;
  const url = hostAsUrl(bracketed);
  return url && !url.port ? withoutTrailingDot(url.hostname) : null;
}

/**
 * A request's `Host` header read as a URL's host is read (lower-cased, an IPv4 address in
 * any of its spellings as four decimals, an IPv6 one compressed), so `LOCALHOST`, `127.1`
 * and `0x7f000001` are the names they stand for: `host` keeps the port (the request's URL
 * is built from it), `name` is the form ALLOWED_HOSTS is held in. An empty header names the
 * empty name, which no configured host is. Null: not a host at all (a path, user info, a
 * port that is not a number, a character no host name holds).
 */
export function readHostHeader(value: string): { host: string; name: string } | null {
  if (value === '') return { host: '', name: '' };
  const url = hostAsUrl(value);
  return url ? { host: url.host, name: withoutTrailingDot(url.hostname) } : null;
}

/** `text` as the authority of an http URL, or null if it is more (or other) than a host and port. */
function hostAsUrl(text: string): URL | null {
  if (text.includes('@')) return null;
  try {
    const url = new URL(`http://${text}/`);
    return url.pathname === '/' && !url.search && !url.hash ? url : null;
  } catch {
    return null;
  }
}

export const withoutTrailingDot = (name: string) => (name.endsWith('.') ? name.slice(0, -1) : name);

/** localhost (and its subdomains), 127.0.0.0/8 and ::1. */
export function isLoopbackHostName(name: string): boolean {
  return (
    name === 'localhost' ||
    name.endsWith('.localhost') ||
    name === '[::1]' ||
    /^127(\.\d{1,3}){3}$/.test(name)
  );
}
