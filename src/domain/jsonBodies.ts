/**
 * What the edge checks of a JSON request body before any parser or validator reads it, so
 * that a body the gateway cannot read is a 4xx in the surface's shape, never a 500:
 *
 * - the media type: `application/json` (compared case-insensitively, parameters allowed),
 *   where a route takes only JSON; a `charset` other than UTF-8 is refused (415), as JSON
 *   is UTF-8 (RFC 8259) and the gateway decodes nothing else;
 * - the bytes: valid UTF-8 (a body that is not would be read with U+FFFD in place of its
 *   bytes, a different text from the one sent);
 * - the nesting: at most `MAX_JSON_NESTING` arrays and objects open at once, counted in
 *   one pass before parsing (a value nested thousands deep is no input of this API, and
 *   some readers of it recurse).
 *
 * Syntax errors and values of the wrong type are left to the route's own parser and
 * validator, which already answer 400 naming the problem.
 */

const MAX_JSON_NESTING = 64;

export interface BodyProblem {
  /** The gateway's error code for it (src/errors.ts). */
  code: 'BAD_USER_INPUT' | 'UNSUPPORTED_MEDIA_TYPE';
  message: string;
}

/** The media type of a Content-Type header, lower-cased, and its charset if it names one. */
function mediaTypeOf(header: string): { type: string; charset: string | null } {
  const [type = '', ...params] = header.split(';');
  let charset: string | null = null;
  for (const param of params) {
    const [name, value] = param.split('=').map((s) => s.trim());
    if (name?.toLowerCase() === 'charset' && value !== undefined) {
      charset = value.replace(/^"(.*)"$/, '$1').toLowerCase();
    }
  }
  return { type: type.trim().toLowerCase(), charset };
}

/** Whether a Content-Type header says JSON (`application/json`, in any case). */
export function isJsonMediaType(header: string | null | undefined): boolean {
  return header !== null && header !== undefined && mediaTypeOf(header).type === 'application/json';
}

/** The most arrays and objects open at once in a JSON text, strings left out. */
function jsonNesting(text: string): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '"') {
      i++;
      while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    } else if (ch === '{' || ch === '[') {
      depth++;
      if (depth > deepest) deepest = depth;
    } else if (ch === '}' || ch === ']') {
      depth--;
    }
  }
  return deepest;
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** A JSON body read: what is wrong with it, or its text (null: not JSON, its reader's to judge). */
export type JsonBodyReading =
  | { problem: BodyProblem; text?: undefined }
  | { problem: null; text: string | null };

/**
 * A JSON body (`bytes`, sent with Content-Type `contentType`) checked and decoded: what is
 * wrong with it, or its text. With `onlyJson`, a body in another media type (or none
 * named) is a 415; without it, another media type is the reader's to judge and only a JSON
 * body is checked (its text is null then).
 */
export function readJsonBody(
  contentType: string | null | undefined,
  bytes: ArrayBuffer,
  onlyJson: boolean,
): JsonBodyReading {
  const refused = (problem: BodyProblem) => ({ problem });
  if (!contentType) {
    if (!onlyJson || bytes.byteLength === 0) return { problem: null, text: null };
    return refused({
      code: 'UNSUPPORTED_MEDIA_TYPE',
      message: 'Content-Type must be application/json',
    });
  }
  const { type, charset } = mediaTypeOf(contentType);
  if (type !== 'application/json') {
    return onlyJson
      ? refused({
          code: 'UNSUPPORTED_MEDIA_TYPE',
          message: `Content-Type must be application/json, not ${type || 'empty'}`,
        })
      : { problem: null, text: null };
  }
  if (charset !== null && charset !== 'utf-8' && charset !== 'utf8') {
    return refused({
      code: 'UNSUPPORTED_MEDIA_TYPE',
      message: `charset must be utf-8 (JSON is UTF-8), not ${charset}`,
    });
  }
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    return refused({ code: 'BAD_USER_INPUT', message: 'body: not valid UTF-8' });
  }
  const nesting = jsonNesting(text);
  if (nesting > MAX_JSON_NESTING) {
    return refused({
      code: 'BAD_USER_INPUT',
      message: `body: nested ${nesting} deep, more than the ${MAX_JSON_NESTING} arrays and objects allowed`,
    });
  }
  return { problem: null, text };
}

/** What is wrong with a JSON body, or null (readJsonBody's verdict alone). */
export function jsonBodyProblem(
  contentType: string | null | undefined,
  bytes: ArrayBuffer,
  onlyJson: boolean,
): BodyProblem | null {
  return readJsonBody(contentType, bytes, onlyJson).problem;
}
