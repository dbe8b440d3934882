/** Bad configuration: every problem at once, one line each, so the operator fixes them in one go. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';

  constructor(readonly problems: readonly string[]) {
    const count = problems.length === 1 ? '1 problem' : `${problems.length} problems`;
    super(`Invalid configuration (${count}):\n${problems.map((p) => `  ${p}`).join('\n')}`);
  }
}
