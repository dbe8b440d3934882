export * from './error-codes.js';
export * from './vocabulary.js';
export * from './scan-options.js';
export * from './scan-records.js';
export * from './envelope.js';
export * from './error-status.js';
export * from './openapi-document.js';
export * from './webhooks.js';
