import { afterAll, beforeAll, describe } from 'vitest';
import { defineScanScenarios } from './support/scenarios.js';
import { startTestApi } from './support/test-runtime.js';
import type { TestApi } from './support/test-runtime.js';

describe('end to end, embedded mode (in-memory queue, in-process worker)', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(() => api.close());
  defineScanScenarios(() => api);
});
