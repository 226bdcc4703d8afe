/**
 * The key inside a Node's global ID. Facts, entities, episodes and memories are only
 * unique within a dataset, so their global IDs carry the dataset as well as the public id
 * (or lower-cased name); the Relay plugin base64-encodes `Type:<key>`.
 */
export function nodeKey(dataset: string, id: string): string {
  return JSON.stringify([dataset, id]);
}

export function parseNodeKey(key: string): { dataset: string; id: string } | null {
  try {
    const parsed = JSON.parse(key) as unknown;
    if (
      Array.isArray(parsed) &&
      parsed.length === 2 &&
      parsed.every((p) => typeof p === 'string')
    ) {
      return { dataset: parsed[0] as string, id: parsed[1] as string };
    }
  } catch {
    // not ours
  }
  return null;
}
