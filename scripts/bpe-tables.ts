// Writes each encoding's built BPE tables beside the built engine (packages/core/dist/tokens), so a
// process that counts reads them in milliseconds (bpe-table-snapshot.ts). Run by `npm run build`
// after tsc, over the built code, whose fingerprint the snapshots carry.
import { TOKEN_ENCODINGS } from '@reposcan/contracts/vocabulary';
import { writeTableSnapshots } from '@reposcan/core';

for (const path of writeTableSnapshots(TOKEN_ENCODINGS)) console.log(`wrote ${path}`);
