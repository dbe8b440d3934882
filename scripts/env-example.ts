// Prints .env.example from the config package's own table, so the file cannot drift from the code.
import { CONFIG_DOCS } from '@reposcan/config';

const lines = ['# reposcan configuration. Every variable is optional; values shown are the defaults.', ''];
for (const doc of CONFIG_DOCS) {
  lines.push(`# ${doc.description}`);
  lines.push(/^(unset|cores|all without)/.test(doc.default) ? `# ${doc.name}=` : `${doc.name}=${doc.default}`);
  lines.push('');
}
process.stdout.write(lines.join('\n'));
