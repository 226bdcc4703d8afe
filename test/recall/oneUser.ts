/**
 * One user, 35 facts (subject | predicate | object): a dataset a user of recall would try
 * it on, with traps that share a word with a question and mean something else ("home
 * office", "hot dog stands", "knows a good mechanic").
 */
export const ONE_USER_FACTS = [
  'user | lives in | lisbon',
  'user | works from | a home office on fridays',
  'user | owns | a golden retriever named biscuit',
  'user | dislikes | hot dog stands',
  'user | owns | a bicycle',
  'user | speaks | portuguese and english',
  'user | knows | a good mechanic',
  'user | works as | a nurse',
  'user | works at | santa maria hospital',
  'user | is allergic to | peanuts',
  'user | prefers | black coffee in the morning',
  'user | plays | the guitar',
  'user | has a sister named | ana',
  'ana | lives in | porto',
  'user | drives | a 2015 honda civic',
  'user | is planning | a trip to japan in spring',
  'user | enjoys | hiking in sintra',
  'user | reads | science fiction novels',
  'user | is learning | to bake sourdough bread',
  'user | supports | benfica',
  'user | was born in | 1990',
  'user | studied | nursing at the university of lisbon',
  'user | is vegetarian since | 2021',
  'user | has | two nephews',
  'user | wakes up at | 6 am',
  'user | volunteers at | an animal shelter',
  'user | listens to | jazz podcasts',
  'user | wants to | run a marathon',
  'user | uses | an iphone',
  'user | pays rent of | 1200 euros a month',
  'user | is afraid of | spiders',
  'user | favourite food is | bacalhau',
  'user | goes to | pilates on tuesdays',
  'user | has | a small balcony garden with tomatoes',
  'user | birthday is on | march 3',
] as const;

/** Questions that share no word with the fact they ask about (or share one with a trap). */
export const PARAPHRASED = [
  { question: 'which city is home', answer: 'user | lives in | lisbon' },
  { question: 'what kind of dog', answer: 'user | owns | a golden retriever named biscuit' },
  { question: 'does the user have a bike', answer: 'user | owns | a bicycle' },
  {
    question: 'which languages does the user know',
    answer: 'user | speaks | portuguese and english',
  },
] as const;
