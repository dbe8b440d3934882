// Progress on stderr: one line per step with a bar, so it reads the same in a terminal and a log.

export class Progress {
  private done = 0;
  private readonly started = performance.now();

  constructor(private total: number) {}

  /** Adds steps discovered later (e.g. one-off rows). */
  grow(by: number): void {
    this.total += by;
  }

  begin(label: string): void {
    process.stderr.write(`${this.bar()} ${label} …\n`);
  }

  end(result: string): void {
    this.done++;
    process.stderr.write(`${this.bar()}   ${result}\n`);
  }

  note(text: string): void {
    process.stderr.write(`      ${text}\n`);
  }

  private bar(): string {
    const width = 20;
    const filled = this.total === 0 ? width : Math.round((this.done / this.total) * width);
    const elapsed = Math.round((performance.now() - this.started) / 1000);
    const pad = String(this.total).length;
    return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${String(this.done).padStart(pad)}/${this.total} ${formatDuration(elapsed)}`;
  }
}

function formatDuration(seconds: number): string {
  const m = Math.floor(seconds / 60);
  const s = seconds % 60;
  return `${m}:${String(s).padStart(2, '0')}`;
}

/** A simple counter for corpus building: prints at most every half second. */
export function counter(label: string, total: number): (done: number) => void {
  let last = 0;
  return (done) => {
    const now = performance.now();
    if (done < total && now - last < 500) return;
    last = now;
    process.stderr.write(`      ${label}: ${done}/${total}\n`);
  };
}
