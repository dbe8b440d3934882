import type { ArtifactFormatName } from '@reposcan/contracts/vocabulary';

export type ArtifactFormat = ArtifactFormatName;

/** Fixed file names inside a scan's output folder, so lookup never builds a path from user input. */
export const ARTIFACT_FILE_NAMES = {
  txt: 'output.txt',
  md: 'output.md',
  json: 'output.json',
  zip: 'output.zip',
} as const satisfies Record<ArtifactFormat, string>;

export interface WrittenArtifact {
  format: ArtifactFormat;
  /** File name inside the output folder. */
  file: string;
  bytes: number;
  sha256: string;
}
