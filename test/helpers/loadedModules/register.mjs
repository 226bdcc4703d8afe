// `node --import <this file>`: registers ./hooks.mjs before anything else loads.
import { register } from 'node:module';

register(new URL('./hooks.mjs', import.meta.url));
