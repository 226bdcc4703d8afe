import { readHostHeader } from '../domain/hostNames.js';

/**
 * What is wrong with a request line Node could not parse, in words a user can act on. The
 * usual cause is a URL typed with a space or a control character in it (a placeholder
 * such as `<episode id>` left in a copied example): Node refuses the whole request before
 * the gateway sees it, so this names the query parameter (or the path) that holds it, or
 * says the target is no path.
 */
export function describeMalformedRequest(rawPacket: unknown): string | null {
  const line = requestLineOf(rawPacket);
  const versioned = / HTTP\/\d\.\d$/.exec(line);
  const firstSpace = line.indexOf(' ');
  if (!versioned || firstSpace < 0) return null;
  const target = line.slice(firstSpace + 1, versioned.index);
  const at = [...target].findIndex((c) => c === ' ' || c.charCodeAt(0) < 0x20 || c === '\x7f');
  if (at < 0) return requestTargetProblem(target);
  const what = target[at] === ' ' ? 'a space' : 'a control character';
  const encoded = `%${target.charCodeAt(at).toString(16).toUpperCase().padStart(2, '0')}`;
  const query = target.indexOf('?');
  if (query < 0 || at < query) {
    return `The URL's path holds ${what}, which must be percent-encoded (${encoded})`;
  }
  const pair =
    target
      .slice(query + 1, at)
      .split('&')
      .pop() ?? '';
  // The client's own parameter name, echoed: bounded, so a long one does not fill the answer.
  const name = decodeURIComponentSafe(pair.split('=')[0] ?? '').slice(0, 100);
  return `${name || 'The query'}: holds ${what}, which a URL must carry percent-encoded (${encoded}); replace a placeholder such as <id> with a value`;
}

/** A request's head as the listener reads it before the Node adapter builds the request. */
interface RequestHead {
  url?: string | undefined;
  httpVersion: string;
  rawHeaders: string[];
}

/**
 * What Node parsed but the gateway cannot take as a request, in words a user can act on,
 * or the request's Host as a URL reads it (with its port; empty: none was named). The Node
 * adapter would refuse each of these with an empty 400 (or, for a Host spelled otherwise than
 * a URL writes it, `LOCALHOST` or `127.1`, take a well-formed name for a malformed one).
 */
export function readRequestHead({
  url = '',
  httpVersion,
  rawHeaders,
}: RequestHead): { problem: string } | { host: string } {
  const problem = requestTargetProblem(url);
  if (problem) return { problem };
  const hosts = rawHeaders.filter(
    (_, i) => i % 2 === 1 && rawHeaders[i - 1]!.toLowerCase() === 'host',
  );
  // RFC 9112 section 3.2: a server answers 400 to both.
  if (hosts.length === 0 && httpVersion === '1.1') {
    return { problem: 'An HTTP/1.1 request must carry a Host header' };
  }
  if (hosts.length > 1) {
    return { problem: `A request must carry one Host header, not ${hosts.length}` };
  }
  const value = hosts[0] ?? '';
  const host = readHostHeader(value);
  if (!host) {
    // The client's own header, echoed: bounded, so a long one does not fill the answer.
    return {
      problem: `Host: "${value.slice(0, 100)}" is not a host name or address (with an optional :port)`,
    };
  }
  return { host: host.host };
}

/**
 * A request target the gateway cannot serve: neither a path nor an absolute http URL
 * (`OPTIONS *`, `GET graphql`), or a backslash in its path, which a URL parser reads as a
 * slash (`/\evil.example/` would become `//evil.example/`). In the query it is data.
 */
function requestTargetProblem(target: string): string | null {
  const absolute = target.startsWith('http://') || target.startsWith('https://');
  if (!target.startsWith('/') && !absolute) {
    return `The request target must be a path starting with / (or an absolute http URL), not "${target.slice(0, 100)}"`;
  }
  if (target.split('?', 1)[0]!.includes('\\')) {
    return "The URL's path holds a backslash, which must be percent-encoded (%5C)";
  }
  if (absolute && !URL.canParse(target)) {
    return `The request target "${target.slice(0, 100)}" is not a URL`;
  }
  return null;
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** The first line of the raw bytes Node could not parse into a request (its first 8 KiB). */
export function requestLineOf(rawPacket: unknown): string {
  if (!Buffer.isBuffer(rawPacket)) return '';
  return rawPacket.subarray(0, 8192).toString('latin1').split('\r\n', 1)[0] ?? '';
}
