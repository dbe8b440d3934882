/** Whether a Node error carries one of these `code`s (ENOENT …). Kept free of imports so light entry points can use it. */
export function hasCode(error: unknown, ...codes: string[]): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && codes.includes(code);
}
