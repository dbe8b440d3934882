// What every service process runs, whatever its role (api, worker or all): kept out of the apps
// so that neither app imports the other.
export { createLogger } from './create-logger.js';
export type { Logger } from './create-logger.js';
export { FaultInjector } from './fault-injection.js';
export { openScanStore } from './open-scan-store.js';
export { createJanitor, janitorSettings, startJanitor } from './janitor.js';
export type { Janitor, JanitorOptions, RunningJanitor, SweepReport } from './janitor.js';
export { commitCacheSettings, engineLimitsFromConfig } from './engine-limits-from-config.js';
export { listenOn } from './listen-on.js';
