// Human-readable numbers, as every output and the page show them: decimal units with one decimal
// (`28.1 kB`, `3.4 MB`, `37 Bytes`) and abbreviated token counts (`999`, `3.0k`, `1.2M`).

const SIZE_UNITS = ['kB', 'MB', 'GB', 'TB', 'PB'] as const;

export function formatSize(bytes: number): string {
  if (bytes < 1000) return `${bytes} Bytes`;
  let value = bytes;
  let unit = 0;
  value /= 1000;
  // Promote when rounding to one decimal would print 1000.0 of the smaller unit.
  while (value >= 999.95 && unit < SIZE_UNITS.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return `${value.toFixed(1)} ${SIZE_UNITS[unit]}`;
}

export function formatTokens(tokens: number): string {
  if (tokens < 1000) return String(tokens);
  if (tokens < 999_950) return `${(tokens / 1000).toFixed(1)}k`;
  if (tokens < 999_950_000) return `${(tokens / 1_000_000).toFixed(1)}M`;
  return `${(tokens / 1_000_000_000).toFixed(1)}B`;
}
