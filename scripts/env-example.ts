// Writes .env.example and the README's configuration table from the config package's own table,
// so neither can drift from the code (a config test fails when they differ).
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { renderConfigTable, renderEnvExample } from '@reposcan/config';

const root = new URL('../', import.meta.url);
await writeFile(fileURLToPath(new URL('.env.example', root)), renderEnvExample());
const readmePath = fileURLToPath(new URL('README.md', root));
const readme = await readFile(readmePath, 'utf8');
const table = /\| Variable \| Default \| Meaning \|\n(?:\|.*\|\n)+/;
if (!table.test(readme)) throw new Error('README.md has no configuration table to replace');
await writeFile(readmePath, readme.replace(table, `${renderConfigTable()}\n`));
console.log('wrote .env.example and the README configuration table');
