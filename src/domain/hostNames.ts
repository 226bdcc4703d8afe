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
  try {
    const url = new URL(`http://${bracketed}`);
    if (url.port || url.pathname !== '/' || url.username) return null;
    return withoutTrailingDot(url.hostname.toLowerCase());
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
