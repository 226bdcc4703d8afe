import type { NewMemory } from '../../src/store/memoryWrites.js';

/** The store's `createMemory` input for tests that call it directly: plain defaults. */
export function memoryInput(text: string, more: Partial<NewMemory> = {}): NewMemory {
  return {
    memoryId: null,
    text,
    memoryKind: 'preference',
    scope: 'user',
    sourceType: 'conversation',
    sourceId: null,
    projectId: null,
    userId: null,
    importance: 0.5,
    salience: 0.5,
    pinned: false,
    validFrom: null,
    ...more,
  };
}
