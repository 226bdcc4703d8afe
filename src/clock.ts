/**
 * Where "now" comes from. Domain time (what is live, when a fact was recorded, when a
 * memory was archived) is read from a clock once per request, or once per command-line
 * run, and passed down; nothing else in src/ reads the system time (a test keeps it so).
 * Tests and demos pass a clock of their own.
 */
export type Clock = () => Date;

export const systemClock: Clock = () => new Date();
