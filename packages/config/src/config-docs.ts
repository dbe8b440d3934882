import { CONFIG_VARIABLES } from './config-schema.js';

export interface ConfigDoc {
  name: string;
  /** The literal default, or a phrase when it is computed or unset. */
  default: string;
  description: string;
}

/** One entry per variable, in README order: the source for the README table and `.env.example`. */
export const CONFIG_DOCS: readonly ConfigDoc[] = Object.freeze(
  Object.entries(CONFIG_VARIABLES).map(([name, v]) =>
    Object.freeze({ name, default: v.default, description: v.description }),
  ),
);

/** `.env.example`: every variable with its description; literal defaults set, computed ones commented out. */
export function renderEnvExample(): string {
  const lines = [
    '# reposcan configuration. Every variable is optional; values shown are the defaults.',
    '# Copy to .env in the folder you start reposcan from; variables set in the environment win over it.',
    '',
  ];
  for (const doc of CONFIG_DOCS) {
    lines.push(`# ${doc.description}`);
    lines.push(/^(unset|cores|all without)/.test(doc.default) ? `# ${doc.name}=` : `${doc.name}=${doc.default}`);
    lines.push('');
  }
  return lines.join('\n');
}

/** The README's configuration table, header included. */
export function renderConfigTable(): string {
  const rows = CONFIG_DOCS.map((doc) => `| \`${doc.name}\` | ${doc.default} | ${doc.description} |`);
  return ['| Variable | Default | Meaning |', '|---|---|---|', ...rows].join('\n');
}
