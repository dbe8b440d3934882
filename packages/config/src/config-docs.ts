import { CONFIG_VARIABLES } from './config-schema.js';

export interface ConfigDoc {
  name: string;
  /** The literal default, or a phrase when it is computed or unset. */
  default: string;
  description: string;
}

/** One entry per variable, in README order: the source for the README table and `.env.example`. */
export const CONFIG_DOCS: readonly ConfigDoc[] = Object.freeze(
  Object.entries(CONFIG_VARIABLES).map(([name, v]) => Object.freeze({ name, default: v.default, description: v.description })),
);
