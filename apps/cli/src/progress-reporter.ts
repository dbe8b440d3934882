import type { ScanPhase, ScanState } from '@reposcan/client';

export interface ProgressUpdate {
  state: ScanState;
  phase: ScanPhase;
  filesDone: number;
  filesTotal: number;
}

export interface ProgressReporter {
  update(update: ProgressUpdate): void;
  /** A line of its own (a written file, a warning), kept clear of the bar. */
  note(line: string): void;
  /** Leave the bar on its final state and end its line. */
  finish(): void;
}

export type ProgressMode = 'bar' | 'lines' | 'off';

interface ProgressStream {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

/** A bar on a terminal; one plain line per phase when piped; nothing with --quiet. */
export function progressMode(stream: ProgressStream, quiet: boolean, env: NodeJS.ProcessEnv): ProgressMode {
  if (quiet) return 'off';
  return stream.isTTY === true && env.TERM !== 'dumb' ? 'bar' : 'lines';
}

// Share of the whole scan at the start of each phase; `read` fills most of the bar by files.
const PHASE_START: Record<ScanPhase, number> = {
  queued: 0,
  clone: 2,
  extract: 2,
  walk: 10,
  read: 12,
  render: 85,
  zip: 90,
  publish: 97,
  done: 100,
};
const PHASE_END: Partial<Record<ScanPhase, number>> = { read: 85, zip: 97 };
const BAR_WIDTH = 24;
const REDRAW_MS = 80;

export function percentOf(update: ProgressUpdate): number {
  if (update.state === 'completed') return 100;
  const start = PHASE_START[update.phase];
  const end = PHASE_END[update.phase];
  if (end === undefined || update.filesTotal <= 0) return start;
  return Math.floor(start + ((end - start) * Math.min(update.filesDone, update.filesTotal)) / update.filesTotal);
}

function describe(update: ProgressUpdate): string {
  if (update.state !== 'running') return update.state;
  if (update.filesTotal > 0 && update.phase !== 'done')
    return `${update.phase} ${update.filesDone}/${update.filesTotal} files`;
  return update.phase;
}

export function createProgressReporter(stream: ProgressStream, mode: ProgressMode): ProgressReporter {
  if (mode === 'off') return { update() {}, note() {}, finish() {} };
  if (mode === 'lines') return linesReporter(stream);
  return barReporter(stream);
}

function linesReporter(stream: ProgressStream): ProgressReporter {
  let last = '';
  return {
    update(update) {
      // One line per state or phase, not per file: a log stays readable.
      // `done` is followed by the terminal state at once; one line for both.
      if (update.state === 'running' && update.phase === 'done') return;
      const key = update.state === 'running' ? `running:${update.phase}` : update.state;
      if (key === last) return;
      last = key;
      stream.write(`reposcan: ${describe(update)}\n`);
    },
    note(line) {
      stream.write(`reposcan: ${line}\n`);
    },
    finish() {},
  };
}

function barReporter(stream: ProgressStream): ProgressReporter {
  let current: ProgressUpdate | null = null;
  let lastKey = '';
  let lastDraw = 0;
  let open = false;
  let shown = '';
  const draw = (): void => {
    if (!current) return;
    const percent = percentOf(current);
    const filled = Math.round((BAR_WIDTH * percent) / 100);
    let line = `${'█'.repeat(filled)}${'░'.repeat(BAR_WIDTH - filled)} ${String(percent).padStart(3)}% ${describe(current)}`;
    // A pseudo-terminal without a size (script, CI runners) reports 0 columns.
    const columns = stream.columns !== undefined && stream.columns >= 20 ? stream.columns : 80;
    if (line.length > columns - 1) line = line.slice(0, Math.max(0, columns - 1));
    if (open && line === shown) return;
    stream.write(`\r${line}\x1b[K`);
    shown = line;
    open = true;
    lastDraw = Date.now();
  };
  const endLine = (): void => {
    if (open) stream.write('\n');
    open = false;
  };
  return {
    update(update) {
      current = update;
      const key = `${update.state}:${update.phase}`;
      if (key !== lastKey || Date.now() - lastDraw >= REDRAW_MS) draw();
      lastKey = key;
    },
    note(line) {
      if (open) stream.write('\r\x1b[K');
      stream.write(`${line}\n`);
      open = false;
      draw();
    },
    finish() {
      draw();
      endLine();
      current = null;
    },
  };
}
