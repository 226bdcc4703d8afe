/**
 * Host names, for two rules of the embedded (development) mode:
 * - requests whose `Host` is not an allowed host are refused (ALLOWED_HOSTS), so a web
 *   page cannot reach the gateway through a DNS name it rebinds to 127.0.0.1;
 * - GraphiQL prefills the development key only for a loopback `Host`.
 */

/** The names every embedded gateway answers to: the loopback ones. */
export const LOOPBACK_HOSTS = ['localhost', '127.0.0.1', '[::1]'] as const;

/**
 * The host name a request was sent to, lower-cased, without port or trailing dot. The
 * Node adapter builds the request's URL from its Host header, so this is that header.
 */
export function requestHostName(request: Request): string {
  return withoutTrailingDot(new URL(request.url).hostname.toLowerCase());
}

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

const withoutTrailingDot = (name: string) => (name.endsWith('.') ? name.slice(0, -1) : name);

/** localhost (and its subdomains), 127.0.0.0/8 and ::1. */
export function isLoopbackHostName(name: string): boolean {
  return (
    name === 'localhost' ||
    name.endsWith('.localhost') ||
    name === '[::1]' ||
    /^127(\.\d{1,3}){3}$/.test(name)
  );
}
