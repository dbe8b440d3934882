export { checkZip } from './check-zip.js';
export { extractZip, type ExtractZipOptions, type ExtractZipResult } from './extract-zip.js';
export type { ZipLimits } from './zip-limits.js';
