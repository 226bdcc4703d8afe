/**
 * The seed of a property test: PROPERTY_SEED when set (to repeat a run), otherwise a fresh
 * one, so every run tries histories the last did not. It is printed with how to repeat it,
 * since a failure that only a fresh seed found is lost without it; fast-check prints the
 * path of the counterexample beside it.
 */
export function propertySeed(name: string): number {
  const given = process.env.PROPERTY_SEED;
  const seed = given === undefined || given === '' ? freshSeed() : Number(given);
  if (!Number.isSafeInteger(seed)) {
    throw new Error(`PROPERTY_SEED must be an integer, not ${JSON.stringify(given)}`);
  }
  console.log(`${name}: seed ${seed} (PROPERTY_SEED=${seed} repeats it)`);
  return seed;
}

function freshSeed(): number {
  // Not the clock: files that start in the same millisecond would share a seed.
  return Math.floor(Math.random() * 2 ** 31);
}
