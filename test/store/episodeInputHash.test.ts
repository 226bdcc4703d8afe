import { describe, expect, it } from 'vitest';
import { canonicalInput, type EpisodeInput, inputHashOf } from '../../src/store/recordEpisode.js';

/**
 * An episode's id is claimed with the hash of its canonical input: a retry with the same
 * input is the same episode, another input under the same id is a CONFLICT. Episodes
 * recorded by an earlier release keep their hash, so a change to what the canonical input
 * holds (a new fact field written into it, a date or id written differently) would make
 * every retry of an older episode a CONFLICT. These hashes were taken once and must never
 * change; a new field stays out of the canonical input while it holds its default.
 */

const MINIMAL: EpisodeInput = {
  episodeId: '0B4C6F1E-8A51-4D0B-9D3A-5F2E7C1A9B10',
  occurredAt: new Date('2026-03-01T09:30:00Z'),
  source: 'chat',
  content: 'Hi.',
  entities: [],
  facts: [],
};

const FULL: EpisodeInput = {
  episodeId: '5e0c2d1a-3b4f-4a6e-8c7d-9f1a2b3c4d5e',
  occurredAt: new Date('2026-06-15T18:00:00.250Z'),
  source: 'chat',
  content: 'I sold my Civic; I drive a Corolla now. "Quotes" and ünïcode stay as sent.',
  entities: [
    { name: 'user', type: 'PERSON' },
    { name: 'toyota corolla', type: 'PRODUCT' },
  ],
  facts: [
    {
      subject: 'user',
      predicate: 'drives',
      object: 'toyota corolla',
      objectIsEntity: true,
      confidence: 0.9,
      sourceQuote: 'I drive a Corolla now',
      validAt: new Date('2026-06-15T18:00:00.250Z'),
      validUntil: null,
      supersedes: ['A1B2C3D4-E5F6-4711-8899-AABBCCDDEEFF'],
      replaceExisting: false,
    },
    {
      subject: 'user',
      predicate: 'owned',
      object: 'honda civic',
      objectIsEntity: false,
      confidence: 0.75,
      sourceQuote: null,
      validAt: new Date('2025-01-01T00:00:00Z'),
      validUntil: new Date('2026-06-15T00:00:00Z'),
      supersedes: [],
      replaceExisting: true,
    },
  ],
};

describe("an episode's canonical input and its hash", () => {
  it('are what they were for an episode with no entities and no facts', () => {
    const canonical = canonicalInput(MINIMAL);
    expect(canonical).toBe(
      '{"episodeId":"0b4c6f1e-8a51-4d0b-9d3a-5f2e7c1a9b10","occurredAt":"2026-03-01T09:30:00.000Z","source":"chat","content":"Hi.","entities":[],"facts":[]}',
    );
    expect(inputHashOf(canonical)).toBe(
      '76d24af7982cf1b7a6cd5decafc9a7ad20d55c3bd4b57b75b8dcc26cfb47e1a9',
    );
  });

  it('are what they were for an episode using every field a fact takes', () => {
    const canonical = canonicalInput(FULL);
    expect(JSON.parse(canonical).facts[0]).toEqual({
      subject: 'user',
      predicate: 'drives',
      object: 'toyota corolla',
      objectIsEntity: true,
      confidence: 0.9,
      sourceQuote: 'I drive a Corolla now',
      validAt: '2026-06-15T18:00:00.250Z',
      validUntil: null,
      supersedes: ['a1b2c3d4-e5f6-4711-8899-aabbccddeeff'],
      replaceExisting: false,
    });
    expect(inputHashOf(canonical)).toBe(
      '77deff170ab38a23a7241ebc7d16f07dbef3a085ba0429840767737228d5de71',
    );
  });
});
