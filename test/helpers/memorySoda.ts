/** The fields of a Memory Soda fact, in the order its document lists them. */
export const MEMORY_SODA_FACT_FIELDS = [
  'factId',
  'subject',
  'predicate',
  'object',
  'objectIsEntity',
  'confidence',
  'sourceQuote',
  'validAt',
  'validUntil',
  'invalidAt',
  'episodeId',
];
