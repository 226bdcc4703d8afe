/**
 * What is wrong with a request line Node could not parse, in words a user can act on. The
 * usual cause is a URL typed with a space or a control character in it (a placeholder
 * such as `<episode id>` left in a copied example): Node refuses the whole request before
 * the gateway sees it, so this names the query parameter (or the path) that holds it.
 */
export function describeMalformedRequest(rawPacket: unknown): string | null {
  const line = requestLineOf(rawPacket);
  const versioned = / HTTP\/\d\.\d$/.exec(line);
  const firstSpace = line.indexOf(' ');
  if (!versioned || firstSpace < 0) return null;
  const target = line.slice(firstSpace + 1, versioned.index);
  const at = [...target].findIndex((c) => c === ' ' || c.charCodeAt(0) < 0x20 || c === '\x7f');
  if (at < 0) return null;
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
