import { ScanError } from '@reposcan/contracts';

// Refs reach git's argv, so only plain names pass: no leading "-" (an option), no "..", "@{",
// ".lock" or components starting with "." (git rejects those anyway), no spaces or controls.
const REF_CHARS = /^[A-Za-z0-9._/+@#-]{1,200}$/;

export function isSafeRefName(name: string): boolean {
  if (
    !REF_CHARS.test(name) ||
    name.includes('..') ||
    name.includes('@{') ||
    name.endsWith('.lock') ||
    name.endsWith('.')
  ) {
    return false;
  }
  return name
    .split('/')
    .every((component) => component !== '' && !component.startsWith('-') && !component.startsWith('.'));
}

/** 400 INVALID_BRANCH unless `name` is a plain branch or tag name. */
export function assertBranchName(name: string): void {
  if (!isSafeRefName(name)) {
    throw new ScanError(
      'INVALID_BRANCH',
      'branch must be a branch or tag name: letters, digits and "._/+@#-", not starting with "-" or ".", without ".." and at most 200 characters.',
    );
  }
}
