/** The process around a command, passed in so commands never reach for globals. */
export interface CliIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown; isTTY?: boolean; columns?: number };
  cwd: string;
  env: NodeJS.ProcessEnv;
}
