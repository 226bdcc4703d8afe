/*
 * A connection's cursors: opaque base64url strings of its sort key. A cursor that does not
 * decode, or came from another connection, is a BAD_USER_INPUT error rather than a silent
 * first page.
 */

import { badInput } from '../errors.js';

export function encodeCursor(kind: string, parts: (string | number)[]): string {
  return Buffer.from(JSON.stringify([kind, ...parts])).toString('base64url');
}

/**
 * What each part of a connection's sort key is: an instant (epoch ms), a string, or a
 * position (a whole number from 0).
 */
export type CursorShape = readonly ('time' | 'string' | 'position')[];

const fitsShape = (part: unknown, type: CursorShape[number]) => {
  if (type === 'string') return typeof part === 'string';
  if (typeof part !== 'number' || !Number.isSafeInteger(part)) return false;
  return type === 'position' ? part >= 0 : !Number.isNaN(new Date(part).getTime());
};

export function decodeCursor(
  kind: string,
  cursor: string,
  shape: CursorShape,
): (string | number)[] {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    // A part of the wrong type would become an Invalid Date in the page's filter, which
    // reads as an empty page: a malformed cursor is the client's mistake, said as such.
    if (
      Array.isArray(parsed) &&
      parsed[0] === kind &&
      parsed.length === shape.length + 1 &&
      shape.every((type, i) => fitsShape(parsed[i + 1], type))
    ) {
      return parsed.slice(1) as (string | number)[];
    }
  } catch {
    // fall through
  }
  throw badInput(`after: "${cursor.slice(0, 60)}" is not a cursor of this connection`);
}

/**
 * What a connection's cursors hold and mean: `kind` names the connection (a cursor of
 * another is refused), `shape` types the sort key's parts, `of` reads them from a node
 * and `position` turns decoded ones into the store's keyset position.
 */
export interface CursorKey<T, A> {
  kind: string;
  shape: CursorShape;
  of: (node: T) => (string | number)[];
  position: (parts: (string | number)[]) => A;
}

/** A node's (and the store's keyset position's) instant `S` and id `I`. */
type TimeAndId<S extends string, I extends string> = Record<S, Date> & Record<I, string>;

/** The usual sort key: an instant (epoch ms in the cursor), then an id as the tie-break. */
export function timeThenId<S extends string, I extends string>(
  kind: string,
  time: S,
  id: I,
): CursorKey<TimeAndId<S, I>, TimeAndId<S, I>> {
  return {
    kind,
    shape: ['time', 'string'],
    of: (node) => [node[time].getTime(), node[id]],
    position: (parts) =>
      ({ [time]: new Date(parts[0] as number), [id]: String(parts[1]) }) as TimeAndId<S, I>,
  };
}
