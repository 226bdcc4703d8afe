/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
import type { DocumentTypeDecoration } from '@graphql-typed-document-node/core';
export type ApiKeyStatus =
  /** Works. */
  | 'ACTIVE'
  /** Past its expiresAt: refused like a revoked key. */
  | 'EXPIRED'
  /** Revoked: refused. */
  | 'REVOKED';

/** What a change did. FACT_* changes name their fact, EPISODE_RECORDED its episode, MEMORY_* their memory; EPISODE_ERASED and DATASET_ERASED carry only what they removed. */
export type DatasetChangeKind =
  | 'DATASET_ERASED'
  | 'EPISODE_ERASED'
  | 'EPISODE_RECORDED'
  | 'FACT_CORRECTED'
  | 'FACT_DELETED'
  | 'FACT_RECORDED'
  | 'FACT_RESTORED'
  | 'FACT_SUPERSEDED'
  | 'MEMORY_CHANGED'
  | 'MEMORY_CREATED';

export type EntityType =
  | 'CONCEPT'
  | 'DATE'
  | 'EVENT'
  | 'FOOD'
  | 'ORG'
  | 'PERSON'
  | 'PLACE'
  | 'PRODUCT'
  | 'ROLE'
  | 'SKILL'
  | 'THING'
  | 'TOPIC';

/** A fact's state at an instant, checked in this order: SUPERSEDED (invalidAt <= t), FUTURE (validAt > t), EXPIRED (validUntil <= t), LIVE. */
export type FactState =
  | 'EXPIRED'
  | 'FUTURE'
  | 'LIVE'
  | 'SUPERSEDED';

export type InvalidReason =
  | 'DELETED'
  | 'SUPERSEDED';

export type Scope =
  | 'ADMIN'
  | 'READ'
  | 'WRITE';

export type ExplorerFactFragment = { id: string, factId: string, subject: string, predicate: string, object: string, objectIsEntity: boolean, confidence: number, sourceQuote: string | null, validAt: string, validUntil: string | null, recordedAt: string, invalidAt: string | null, invalidReason: InvalidReason | null, episodeId: string | null };

export type TimelineFactFragment = { state: FactState, id: string, factId: string, subject: string, predicate: string, object: string, objectIsEntity: boolean, confidence: number, sourceQuote: string | null, validAt: string, validUntil: string | null, recordedAt: string, invalidAt: string | null, invalidReason: InvalidReason | null, episodeId: string | null, supersededBy: { factId: string, subject: string, predicate: string, object: string } | null, correctedBy: { factId: string, subject: string, predicate: string, object: string } | null, episode: { episodeId: string, source: string, occurredAt: string } | null };

export type ExplorerMemoryFragment = { id: string, memoryId: string, text: string, memoryKind: string, scope: string, importance: number, salience: number, pinned: boolean, version: number, createdAt: string, validFrom: string, validUntil: string | null, archivedAt: string | null, supersededBy: string | null, lastUsedAt: string | null };

export type ExplorerViewerQueryVariables = Exact<{ [key: string]: never; }>;


export type ExplorerViewerQuery = { viewer: { workspace: string, scopes: Array<Scope> }, datasets: { totalCount: number, edges: Array<{ node: { name: string, createdAt: string } }> } };

export type ExplorerTimelineQueryVariables = Exact<{
  dataset: string;
  first: number;
  after?: string | null | undefined;
  validAt?: string | null | undefined;
  knownAt?: string | null | undefined;
  withCounts: boolean;
}>;


export type ExplorerTimelineQuery = { dataset: { name: string, believed?: { totalCount: number }, facts: { totalCount?: number, pageInfo: { hasNextPage: boolean, endCursor: string | null }, edges: Array<{ node: { state: FactState, id: string, factId: string, subject: string, predicate: string, object: string, objectIsEntity: boolean, confidence: number, sourceQuote: string | null, validAt: string, validUntil: string | null, recordedAt: string, invalidAt: string | null, invalidReason: InvalidReason | null, episodeId: string | null, supersededBy: { factId: string, subject: string, predicate: string, object: string } | null, correctedBy: { factId: string, subject: string, predicate: string, object: string } | null, episode: { episodeId: string, source: string, occurredAt: string } | null } }> } } | null };

export type ExplorerFactByIdQueryVariables = Exact<{
  dataset: string;
  factId: string;
  validAt?: string | null | undefined;
  knownAt?: string | null | undefined;
}>;


export type ExplorerFactByIdQuery = { dataset: { name: string, fact: { state: FactState, id: string, factId: string, subject: string, predicate: string, object: string, objectIsEntity: boolean, confidence: number, sourceQuote: string | null, validAt: string, validUntil: string | null, recordedAt: string, invalidAt: string | null, invalidReason: InvalidReason | null, episodeId: string | null, supersededBy: { factId: string, subject: string, predicate: string, object: string } | null, correctedBy: { factId: string, subject: string, predicate: string, object: string } | null, episode: { episodeId: string, source: string, occurredAt: string } | null } | null } | null };

export type ExplorerChangesQueryVariables = Exact<{
  dataset: string;
  since: string;
  until: string;
  first: number;
  learnedAfter?: string | null | undefined;
  droppedAfter?: string | null | undefined;
  withLearned: boolean;
  withDropped: boolean;
  withCounts: boolean;
}>;


export type ExplorerChangesQuery = { dataset: { name: string, learned?: { totalCount?: number, pageInfo: { hasNextPage: boolean, endCursor: string | null }, edges: Array<{ node: { id: string, factId: string, subject: string, predicate: string, object: string, objectIsEntity: boolean, confidence: number, sourceQuote: string | null, validAt: string, validUntil: string | null, recordedAt: string, invalidAt: string | null, invalidReason: InvalidReason | null, episodeId: string | null } }> }, dropped?: { totalCount?: number, pageInfo: { hasNextPage: boolean, endCursor: string | null }, edges: Array<{ node: { id: string, factId: string, subject: string, predicate: string, object: string, objectIsEntity: boolean, confidence: number, sourceQuote: string | null, validAt: string, validUntil: string | null, recordedAt: string, invalidAt: string | null, invalidReason: InvalidReason | null, episodeId: string | null, supersededBy: { id: string, factId: string, subject: string, predicate: string, object: string, objectIsEntity: boolean, confidence: number, sourceQuote: string | null, validAt: string, validUntil: string | null, recordedAt: string, invalidAt: string | null, invalidReason: InvalidReason | null, episodeId: string | null } | null } }> } } | null };

export type ExplorerEntityQueryVariables = Exact<{
  dataset: string;
  name: string;
  validAt?: string | null | undefined;
  knownAt?: string | null | undefined;
}>;


export type ExplorerEntityQuery = { dataset: { name: string, entity: { entityId: string, name: string, type: EntityType, updatedAt: string, facts: Array<{ factId: string, history: Array<{ state: FactState, id: string, factId: string, subject: string, predicate: string, object: string, objectIsEntity: boolean, confidence: number, sourceQuote: string | null, validAt: string, validUntil: string | null, recordedAt: string, invalidAt: string | null, invalidReason: InvalidReason | null, episodeId: string | null, supersededBy: { factId: string, subject: string, predicate: string, object: string } | null, correctedBy: { factId: string, subject: string, predicate: string, object: string } | null, episode: { episodeId: string, source: string, occurredAt: string } | null }> }> } | null } | null };

export type ExplorerEpisodeQueryVariables = Exact<{
  dataset: string;
  episodeId: string;
  validAt?: string | null | undefined;
  knownAt?: string | null | undefined;
}>;


export type ExplorerEpisodeQuery = { dataset: { name: string, episode: { episodeId: string, source: string, content: string, occurredAt: string, recordedAt: string, facts: Array<{ state: FactState, id: string, factId: string, subject: string, predicate: string, object: string, objectIsEntity: boolean, confidence: number, sourceQuote: string | null, validAt: string, validUntil: string | null, recordedAt: string, invalidAt: string | null, invalidReason: InvalidReason | null, episodeId: string | null, supersededBy: { factId: string, subject: string, predicate: string, object: string } | null, correctedBy: { factId: string, subject: string, predicate: string, object: string } | null, episode: { episodeId: string, source: string, occurredAt: string } | null }> } | null } | null };

export type ExplorerSearchQueryVariables = Exact<{
  dataset: string;
  q: string;
  first: number;
  withCounts: boolean;
  after?: string | null | undefined;
  validAt?: string | null | undefined;
  knownAt?: string | null | undefined;
}>;


export type ExplorerSearchQuery = { dataset: { name: string, facts: { totalCount?: number, pageInfo: { hasNextPage: boolean, endCursor: string | null }, edges: Array<{ node: { state: FactState, id: string, factId: string, subject: string, predicate: string, object: string, objectIsEntity: boolean, confidence: number, sourceQuote: string | null, validAt: string, validUntil: string | null, recordedAt: string, invalidAt: string | null, invalidReason: InvalidReason | null, episodeId: string | null, supersededBy: { factId: string, subject: string, predicate: string, object: string } | null, correctedBy: { factId: string, subject: string, predicate: string, object: string } | null, episode: { episodeId: string, source: string, occurredAt: string } | null } }> } } | null };

export type ExplainedRankFragment = { bm25: number, score: number, terms: Array<{ term: string, weight: number, termFrequency: number, documentFrequency: number, idf: number }>, factors: Array<{ name: string, value: number }> };

export type ExplorerRecallQueryVariables = Exact<{
  dataset: string;
  query: string;
  validAt: string;
  knownAt: string;
}>;


export type ExplorerRecallQuery = { dataset: { name: string, recall: { facts: Array<{ relevanceScore: number, fact: { id: string, factId: string, subject: string, predicate: string, object: string, objectIsEntity: boolean, confidence: number, sourceQuote: string | null, validAt: string, validUntil: string | null, recordedAt: string, invalidAt: string | null, invalidReason: InvalidReason | null, episodeId: string | null }, explanation: { bm25: number, score: number, terms: Array<{ term: string, weight: number, termFrequency: number, documentFrequency: number, idf: number }>, factors: Array<{ name: string, value: number }> } }>, memories: Array<{ relevanceScore: number, memory: { id: string, memoryId: string, text: string, memoryKind: string, scope: string, importance: number, salience: number, pinned: boolean, version: number, createdAt: string, validFrom: string, validUntil: string | null, archivedAt: string | null, supersededBy: string | null, lastUsedAt: string | null }, explanation: { bm25: number, score: number, terms: Array<{ term: string, weight: number, termFrequency: number, documentFrequency: number, idf: number }>, factors: Array<{ name: string, value: number }> } }> } } | null };

export type ExplorerMemoriesQueryVariables = Exact<{
  dataset: string;
  first: number;
  withCounts: boolean;
  after?: string | null | undefined;
  asOf?: string | null | undefined;
  includeArchived: boolean;
  includeSuperseded: boolean;
}>;


export type ExplorerMemoriesQuery = { dataset: { name: string, memories: { totalCount?: number, pageInfo: { hasNextPage: boolean, endCursor: string | null }, edges: Array<{ node: { id: string, memoryId: string, text: string, memoryKind: string, scope: string, importance: number, salience: number, pinned: boolean, version: number, createdAt: string, validFrom: string, validUntil: string | null, archivedAt: string | null, supersededBy: string | null, lastUsedAt: string | null } }> } } | null };

export type ExplorerLiveChangesSubscriptionVariables = Exact<{
  dataset: string;
  after?: string | null | undefined;
}>;


export type ExplorerLiveChangesSubscription = { datasetChanges: { id: string, cursor: string, kind: DatasetChangeKind } };

export type ExplorerKeysQueryVariables = Exact<{ [key: string]: never; }>;


export type ExplorerKeysQuery = { apiKeys: Array<{ keyId: string, name: string | null, scopes: Array<Scope>, status: ApiKeyStatus, createdAt: string, expiresAt: string | null, lastUsedAt: string | null, revokedAt: string | null }> };

export type ExplorerCreateKeyMutationVariables = Exact<{
  name: string;
  scopes: Array<Scope> | Scope;
  expiresAt?: string | null | undefined;
}>;


export type ExplorerCreateKeyMutation = { createApiKey: { key: string, apiKey: { keyId: string, name: string | null } } };

export type ExplorerRevokeKeyMutationVariables = Exact<{
  keyId: string;
}>;


export type ExplorerRevokeKeyMutation = { revokeApiKey: { revoked: boolean, apiKey: { keyId: string, status: ApiKeyStatus } } };

export class TypedDocumentString<TResult, TVariables>
  extends String
  implements DocumentTypeDecoration<TResult, TVariables>
{
  __apiType?: NonNullable<DocumentTypeDecoration<TResult, TVariables>['__apiType']>;
  private value: string;
  public __meta__?: Record<string, any> | undefined;

  constructor(value: string, __meta__?: Record<string, any> | undefined) {
    super(value);
    this.value = value;
    this.__meta__ = __meta__;
  }

  override toString(): string & DocumentTypeDecoration<TResult, TVariables> {
    return this.value;
  }
}
export const ExplorerFactFragmentDoc = new TypedDocumentString(`
    fragment ExplorerFact on Fact {
  id
  factId
  subject
  predicate
  object
  objectIsEntity
  confidence
  sourceQuote
  validAt
  validUntil
  recordedAt
  invalidAt
  invalidReason
  episodeId
}
    `, {"fragmentName":"ExplorerFact"}) as unknown as TypedDocumentString<ExplorerFactFragment, unknown>;
export const TimelineFactFragmentDoc = new TypedDocumentString(`
    fragment TimelineFact on Fact {
  ...ExplorerFact
  state(validAt: $validAt, knownAt: $knownAt)
  supersededBy {
    factId
    subject
    predicate
    object
  }
  correctedBy {
    factId
    subject
    predicate
    object
  }
  episode {
    episodeId
    source
    occurredAt
  }
}
    fragment ExplorerFact on Fact {
  id
  factId
  subject
  predicate
  object
  objectIsEntity
  confidence
  sourceQuote
  validAt
  validUntil
  recordedAt
  invalidAt
  invalidReason
  episodeId
}`, {"fragmentName":"TimelineFact"}) as unknown as TypedDocumentString<TimelineFactFragment, unknown>;
export const ExplorerMemoryFragmentDoc = new TypedDocumentString(`
    fragment ExplorerMemory on Memory {
  id
  memoryId
  text
  memoryKind
  scope
  importance
  salience
  pinned
  version
  createdAt
  validFrom
  validUntil
  archivedAt
  supersededBy
  lastUsedAt
}
    `, {"fragmentName":"ExplorerMemory"}) as unknown as TypedDocumentString<ExplorerMemoryFragment, unknown>;
export const ExplainedRankFragmentDoc = new TypedDocumentString(`
    fragment ExplainedRank on RecallExplanation {
  terms(first: 20) {
    term
    weight
    termFrequency
    documentFrequency
    idf
  }
  bm25
  factors {
    name
    value
  }
  score
}
    `, {"fragmentName":"ExplainedRank"}) as unknown as TypedDocumentString<ExplainedRankFragment, unknown>;
export const ExplorerViewerDocument = new TypedDocumentString(`
    query ExplorerViewer {
  viewer {
    workspace
    scopes
  }
  datasets(first: 100) {
    totalCount
    edges {
      node {
        name
        createdAt
      }
    }
  }
}
    `) as unknown as TypedDocumentString<ExplorerViewerQuery, ExplorerViewerQueryVariables>;
export const ExplorerTimelineDocument = new TypedDocumentString(`
    query ExplorerTimeline($dataset: String!, $first: Int!, $after: String, $validAt: DateTime, $knownAt: DateTime, $withCounts: Boolean!) {
  dataset(name: $dataset) {
    name
    believed: facts(first: 1, validAt: $validAt, knownAt: $knownAt) @include(if: $withCounts) {
      totalCount
    }
    facts(
      first: $first
      after: $after
      includeInvalidated: true
      recordedBy: $knownAt
    ) {
      totalCount @include(if: $withCounts)
      pageInfo {
        hasNextPage
        endCursor
      }
      edges {
        node {
          ...TimelineFact
        }
      }
    }
  }
}
    fragment ExplorerFact on Fact {
  id
  factId
  subject
  predicate
  object
  objectIsEntity
  confidence
  sourceQuote
  validAt
  validUntil
  recordedAt
  invalidAt
  invalidReason
  episodeId
}
fragment TimelineFact on Fact {
  ...ExplorerFact
  state(validAt: $validAt, knownAt: $knownAt)
  supersededBy {
    factId
    subject
    predicate
    object
  }
  correctedBy {
    factId
    subject
    predicate
    object
  }
  episode {
    episodeId
    source
    occurredAt
  }
}`) as unknown as TypedDocumentString<ExplorerTimelineQuery, ExplorerTimelineQueryVariables>;
export const ExplorerFactByIdDocument = new TypedDocumentString(`
    query ExplorerFactById($dataset: String!, $factId: ID!, $validAt: DateTime, $knownAt: DateTime) {
  dataset(name: $dataset) {
    name
    fact(factId: $factId) {
      ...TimelineFact
    }
  }
}
    fragment ExplorerFact on Fact {
  id
  factId
  subject
  predicate
  object
  objectIsEntity
  confidence
  sourceQuote
  validAt
  validUntil
  recordedAt
  invalidAt
  invalidReason
  episodeId
}
fragment TimelineFact on Fact {
  ...ExplorerFact
  state(validAt: $validAt, knownAt: $knownAt)
  supersededBy {
    factId
    subject
    predicate
    object
  }
  correctedBy {
    factId
    subject
    predicate
    object
  }
  episode {
    episodeId
    source
    occurredAt
  }
}`) as unknown as TypedDocumentString<ExplorerFactByIdQuery, ExplorerFactByIdQueryVariables>;
export const ExplorerChangesDocument = new TypedDocumentString(`
    query ExplorerChanges($dataset: String!, $since: DateTime!, $until: DateTime!, $first: Int!, $learnedAfter: String, $droppedAfter: String, $withLearned: Boolean!, $withDropped: Boolean!, $withCounts: Boolean!) {
  dataset(name: $dataset) {
    name
    learned: facts(
      first: $first
      after: $learnedAfter
      recordedAfter: $since
      recordedBy: $until
    ) @include(if: $withLearned) {
      totalCount @include(if: $withCounts)
      pageInfo {
        hasNextPage
        endCursor
      }
      edges {
        node {
          ...ExplorerFact
        }
      }
    }
    dropped: facts(
      first: $first
      after: $droppedAfter
      invalidatedAfter: $since
      invalidatedBy: $until
    ) @include(if: $withDropped) {
      totalCount @include(if: $withCounts)
      pageInfo {
        hasNextPage
        endCursor
      }
      edges {
        node {
          ...ExplorerFact
          supersededBy {
            ...ExplorerFact
          }
        }
      }
    }
  }
}
    fragment ExplorerFact on Fact {
  id
  factId
  subject
  predicate
  object
  objectIsEntity
  confidence
  sourceQuote
  validAt
  validUntil
  recordedAt
  invalidAt
  invalidReason
  episodeId
}`) as unknown as TypedDocumentString<ExplorerChangesQuery, ExplorerChangesQueryVariables>;
export const ExplorerEntityDocument = new TypedDocumentString(`
    query ExplorerEntity($dataset: String!, $name: String!, $validAt: DateTime, $knownAt: DateTime) {
  dataset(name: $dataset) {
    name
    entity(name: $name) {
      entityId
      name
      type
      updatedAt
      facts(first: 50, validAt: $validAt, knownAt: $knownAt) {
        factId
        history(first: 10) {
          ...TimelineFact
        }
      }
    }
  }
}
    fragment ExplorerFact on Fact {
  id
  factId
  subject
  predicate
  object
  objectIsEntity
  confidence
  sourceQuote
  validAt
  validUntil
  recordedAt
  invalidAt
  invalidReason
  episodeId
}
fragment TimelineFact on Fact {
  ...ExplorerFact
  state(validAt: $validAt, knownAt: $knownAt)
  supersededBy {
    factId
    subject
    predicate
    object
  }
  correctedBy {
    factId
    subject
    predicate
    object
  }
  episode {
    episodeId
    source
    occurredAt
  }
}`) as unknown as TypedDocumentString<ExplorerEntityQuery, ExplorerEntityQueryVariables>;
export const ExplorerEpisodeDocument = new TypedDocumentString(`
    query ExplorerEpisode($dataset: String!, $episodeId: ID!, $validAt: DateTime, $knownAt: DateTime) {
  dataset(name: $dataset) {
    name
    episode(episodeId: $episodeId) {
      episodeId
      source
      content
      occurredAt
      recordedAt
      facts(first: 100) {
        ...TimelineFact
      }
    }
  }
}
    fragment ExplorerFact on Fact {
  id
  factId
  subject
  predicate
  object
  objectIsEntity
  confidence
  sourceQuote
  validAt
  validUntil
  recordedAt
  invalidAt
  invalidReason
  episodeId
}
fragment TimelineFact on Fact {
  ...ExplorerFact
  state(validAt: $validAt, knownAt: $knownAt)
  supersededBy {
    factId
    subject
    predicate
    object
  }
  correctedBy {
    factId
    subject
    predicate
    object
  }
  episode {
    episodeId
    source
    occurredAt
  }
}`) as unknown as TypedDocumentString<ExplorerEpisodeQuery, ExplorerEpisodeQueryVariables>;
export const ExplorerSearchDocument = new TypedDocumentString(`
    query ExplorerSearch($dataset: String!, $q: String!, $first: Int!, $withCounts: Boolean!, $after: String, $validAt: DateTime, $knownAt: DateTime) {
  dataset(name: $dataset) {
    name
    facts(
      first: $first
      after: $after
      q: $q
      includeInvalidated: true
      recordedBy: $knownAt
    ) {
      totalCount @include(if: $withCounts)
      pageInfo {
        hasNextPage
        endCursor
      }
      edges {
        node {
          ...TimelineFact
        }
      }
    }
  }
}
    fragment ExplorerFact on Fact {
  id
  factId
  subject
  predicate
  object
  objectIsEntity
  confidence
  sourceQuote
  validAt
  validUntil
  recordedAt
  invalidAt
  invalidReason
  episodeId
}
fragment TimelineFact on Fact {
  ...ExplorerFact
  state(validAt: $validAt, knownAt: $knownAt)
  supersededBy {
    factId
    subject
    predicate
    object
  }
  correctedBy {
    factId
    subject
    predicate
    object
  }
  episode {
    episodeId
    source
    occurredAt
  }
}`) as unknown as TypedDocumentString<ExplorerSearchQuery, ExplorerSearchQueryVariables>;
export const ExplorerRecallDocument = new TypedDocumentString(`
    query ExplorerRecall($dataset: String!, $query: String!, $validAt: DateTime!, $knownAt: DateTime!) {
  dataset(name: $dataset) {
    name
    recall(query: $query, validAt: $validAt, knownAt: $knownAt, first: 20) {
      facts {
        relevanceScore
        fact {
          ...ExplorerFact
        }
        explanation {
          ...ExplainedRank
        }
      }
      memories {
        relevanceScore
        memory {
          ...ExplorerMemory
        }
        explanation {
          ...ExplainedRank
        }
      }
    }
  }
}
    fragment ExplorerFact on Fact {
  id
  factId
  subject
  predicate
  object
  objectIsEntity
  confidence
  sourceQuote
  validAt
  validUntil
  recordedAt
  invalidAt
  invalidReason
  episodeId
}
fragment ExplorerMemory on Memory {
  id
  memoryId
  text
  memoryKind
  scope
  importance
  salience
  pinned
  version
  createdAt
  validFrom
  validUntil
  archivedAt
  supersededBy
  lastUsedAt
}
fragment ExplainedRank on RecallExplanation {
  terms(first: 20) {
    term
    weight
    termFrequency
    documentFrequency
    idf
  }
  bm25
  factors {
    name
    value
  }
  score
}`) as unknown as TypedDocumentString<ExplorerRecallQuery, ExplorerRecallQueryVariables>;
export const ExplorerMemoriesDocument = new TypedDocumentString(`
    query ExplorerMemories($dataset: String!, $first: Int!, $withCounts: Boolean!, $after: String, $asOf: DateTime, $includeArchived: Boolean!, $includeSuperseded: Boolean!) {
  dataset(name: $dataset) {
    name
    memories(
      first: $first
      after: $after
      asOf: $asOf
      includeArchived: $includeArchived
      includeSuperseded: $includeSuperseded
    ) {
      totalCount @include(if: $withCounts)
      pageInfo {
        hasNextPage
        endCursor
      }
      edges {
        node {
          ...ExplorerMemory
        }
      }
    }
  }
}
    fragment ExplorerMemory on Memory {
  id
  memoryId
  text
  memoryKind
  scope
  importance
  salience
  pinned
  version
  createdAt
  validFrom
  validUntil
  archivedAt
  supersededBy
  lastUsedAt
}`) as unknown as TypedDocumentString<ExplorerMemoriesQuery, ExplorerMemoriesQueryVariables>;
export const ExplorerLiveChangesDocument = new TypedDocumentString(`
    subscription ExplorerLiveChanges($dataset: String!, $after: String) {
  datasetChanges(dataset: $dataset, after: $after) {
    id
    cursor
    kind
  }
}
    `) as unknown as TypedDocumentString<ExplorerLiveChangesSubscription, ExplorerLiveChangesSubscriptionVariables>;
export const ExplorerKeysDocument = new TypedDocumentString(`
    query ExplorerKeys {
  apiKeys {
    keyId
    name
    scopes
    status
    createdAt
    expiresAt
    lastUsedAt
    revokedAt
  }
}
    `) as unknown as TypedDocumentString<ExplorerKeysQuery, ExplorerKeysQueryVariables>;
export const ExplorerCreateKeyDocument = new TypedDocumentString(`
    mutation ExplorerCreateKey($name: String!, $scopes: [Scope!]!, $expiresAt: DateTime) {
  createApiKey(name: $name, scopes: $scopes, expiresAt: $expiresAt) {
    key
    apiKey {
      keyId
      name
    }
  }
}
    `) as unknown as TypedDocumentString<ExplorerCreateKeyMutation, ExplorerCreateKeyMutationVariables>;
export const ExplorerRevokeKeyDocument = new TypedDocumentString(`
    mutation ExplorerRevokeKey($keyId: ID!) {
  revokeApiKey(keyId: $keyId) {
    revoked
    apiKey {
      keyId
      status
    }
  }
}
    `) as unknown as TypedDocumentString<ExplorerRevokeKeyMutation, ExplorerRevokeKeyMutationVariables>;