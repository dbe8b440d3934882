/** The process around a command, passed in so commands never reach for globals. */
export interface CliIo {
  /** isTTY: a terminal, where the written paths on stdout are not repeated on stderr. */
  stdout: { write(text: string): unknown; isTTY?: boolean };
  stderr: { write(text: string): unknown; isTTY?: boolean; columns?: number };
  cwd: string;
  /** The process's own streams, for `reposcan mcp`, which speaks MCP on them. */
  streams?: { stdin: NodeJS.ReadableStream; stdout: NodeJS.WritableStream };
  env: NodeJS.ProcessEnv;
}
