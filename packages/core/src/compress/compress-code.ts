// Compressed code and comment removal with tree-sitter (web-tree-sitter and the prebuilt grammars of
// @repomix/tree-sitter-wasms, read from node_modules: nothing is downloaded). Imported by a file
// thread on its first such request (file-thread.ts), and each grammar is loaded on the first file
// of its language, so a scan without these options loads none of it.
//
// The rule is syntactic and the same in every language: a function's or method's block body becomes
// `{ ⋯ }` (Python and Ruby: `⋯` in place of the block, a docstring kept), everything outside
// bodies stays byte for byte. Comment removal takes a comment's whole line when nothing else is on
// it. A tree with any syntax error is not trusted: the text is kept as it is.
import { createRequire } from 'node:module';
import { Language, Parser } from 'web-tree-sitter';
import type { Node, TreeCursor } from 'web-tree-sitter';
import { CODE_LANGUAGES, ELISION, PARSE_STEPS_PER_KIB } from './code-transform.js';
import type { CodeLanguage, CodeTransform, TransformOutcome } from './code-transform.js';

const require = createRequire(import.meta.url);

let initialized: Promise<void> | null = null;
const grammars = new Map<CodeLanguage, Promise<Language>>();
const parsers = new Map<CodeLanguage, Grammar>();

/** A language's parser, and its node types as the ids a tree cursor reads without making strings. */
interface Grammar {
  parser: Parser;
  language: CodeLanguage;
  functions: ReadonlySet<number>;
  comments: ReadonlySet<number>;
  /** Python's module and block: where a docstring may be. */
  blocks: ReadonlySet<number>;
}

async function grammarFor(language: CodeLanguage): Promise<Grammar> {
  const known = parsers.get(language);
  if (known !== undefined) return known;
  initialized ??= Parser.init();
  await initialized;
  let grammar = grammars.get(language);
  if (grammar === undefined) {
    grammar = Language.load(require.resolve(`@repomix/tree-sitter-wasms/out/tree-sitter-${language}.wasm`));
    grammars.set(language, grammar);
  }
  const loaded = await grammar;
  const parser = new Parser();
  parser.setLanguage(loaded);
  const ids = (keep: (type: string) => boolean): Set<number> => {
    const set = new Set<number>();
    for (let id = 0; id < loaded.nodeTypeCount; id++) {
      const type = loaded.nodeTypeForId(id);
      if (type !== null && keep(type)) set.add(id);
    }
    return set;
  };
  // Two batches may have waited for the same grammar: the first to get here keeps its parser.
  const raced = parsers.get(language);
  if (raced !== undefined) {
    parser.delete();
    return raced;
  }
  const made: Grammar = {
    parser,
    language,
    functions: ids((type) => FUNCTIONS[language].has(type)),
    comments: ids((type) => type.endsWith('comment')),
    blocks: language === 'python' ? ids((type) => type === 'module' || type === 'block') : new Set(),
  };
  parsers.set(language, made);
  return made;
}

/** Nodes whose `body` field, when it is a block, is elided. */
const FUNCTIONS: Readonly<Record<CodeLanguage, ReadonlySet<string>>> = (() => {
  const js = [
    'function_declaration',
    'function_expression',
    'function',
    'generator_function_declaration',
    'generator_function',
    'arrow_function',
    'method_definition',
  ];
  const table: Record<CodeLanguage, string[]> = {
    javascript: js,
    typescript: js,
    tsx: js,
    python: ['function_definition'],
    go: ['function_declaration', 'method_declaration', 'func_literal'],
    rust: ['function_item', 'closure_expression'],
    java: ['method_declaration', 'constructor_declaration', 'compact_constructor_declaration', 'lambda_expression'],
    c: ['function_definition'],
    cpp: ['function_definition', 'lambda_expression'],
    c_sharp: [
      'method_declaration',
      'constructor_declaration',
      'destructor_declaration',
      'operator_declaration',
      'conversion_operator_declaration',
      'local_function_statement',
      'accessor_declaration',
      'lambda_expression',
      'anonymous_method_expression',
    ],
    ruby: ['method', 'singleton_method'],
    php: ['function_definition', 'method_declaration', 'anonymous_function'],
  };
  const sets = {} as Record<CodeLanguage, ReadonlySet<string>>;
  for (const language of CODE_LANGUAGES) sets[language] = new Set(table[language]);
  return sets;
})();

interface Edit {
  start: number;
  end: number;
  text: string;
}

const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
const encoder = new TextEncoder();

/**
 * Each text transformed as `transform` asks, in order. A text over the size cap, whose parse runs
 * past the time cap, or whose tree has a syntax error is answered with the reason and kept as is.
 */
export async function transformCode(
  contents: Uint8Array[],
  languages: CodeLanguage[],
  transform: CodeTransform,
): Promise<TransformOutcome[]> {
  const outcomes: TransformOutcome[] = [];
  for (let i = 0; i < contents.length; i++) {
    const content = contents[i] as Uint8Array;
    const language = languages[i] as CodeLanguage;
    if (content.length > transform.maxBytes) {
      outcomes.push({ result: 'too_large' });
      continue;
    }
    const text = decoder.decode(content);
    const deadline = performance.now() + transform.timeoutMs;
    let outcome = transformText(await grammarFor(language), text, transform, deadline);
    // A header is C or C++; what the C grammar cannot read is tried as C++.
    if (outcome === 'parse_error' && language === 'c')
      outcome = transformText(await grammarFor('cpp'), text, transform, deadline);
    if (typeof outcome === 'string') outcomes.push({ result: outcome });
    else if (outcome.text === text) outcomes.push({ result: 'transformed' });
    else outcomes.push({ result: 'transformed', content: encoder.encode(outcome.text) });
  }
  return outcomes;
}

/** One text through one grammar: the new text, or why there is none. */
function transformText(
  grammar: Grammar,
  text: string,
  transform: CodeTransform,
  deadline: number,
): { text: string } | 'timeout' | 'parse_error' {
  // The progress callback cancels the parse when it returns true (web-tree-sitter's typing says void).
  const budget = 2_000 + Math.ceil(((transform.parseStepsPerKib ?? PARSE_STEPS_PER_KIB) * text.length) / 1024);
  let steps = 0;
  const progressCallback = (() => ++steps > budget || performance.now() > deadline) as unknown as () => void;
  const tree = grammar.parser.parse(text, null, { progressCallback });
  if (tree === null) {
    grammar.parser.reset();
    return 'timeout';
  }
  try {
    if (tree.rootNode.hasError) return 'parse_error';
    const edits = collectEdits(tree.walk(), text, grammar, transform);
    // The walk counts too: the cap is on the whole file's work.
    if (performance.now() > deadline) return 'timeout';
    return { text: applyEdits(text, edits) };
  } finally {
    tree.delete();
  }
}

interface Comment {
  start: number;
  end: number;
  /** A Python docstring: documentation, removed as comments are. */
  docstring?: true;
}

function collectEdits(cursor: TreeCursor, text: string, grammar: Grammar, transform: CodeTransform): Edit[] {
  const edits: Edit[] = [];
  const comments: Comment[] = [];
  const { functions, blocks } = grammar;
  const visit = (): void => {
    const type = cursor.nodeTypeId;
    if (grammar.comments.has(type)) {
      // Some grammars (Rust's line comments) end a comment after its newline.
      let end = cursor.endIndex;
      while (end > cursor.startIndex && (text[end - 1] === '\n' || text[end - 1] === '\r')) end--;
      comments.push({ start: cursor.startIndex, end });
      return;
    }
    if (transform.removeComments && blocks.has(type)) {
      const docstring = docstringOf(cursor.currentNode);
      if (docstring !== null) comments.push({ start: docstring.startIndex, end: docstring.endIndex, docstring: true });
    }
    if (transform.signatures && functions.has(type)) {
      const fn = cursor.currentNode;
      const edit = elideBody(fn, text);
      if (edit !== null) {
        // What comes before the body (comments between parameters, say) is still visited.
        visitChildren(Math.min(edit.start, (fn.childForFieldName('body') as Node).startIndex));
        edits.push(edit);
        return;
      }
    }
    visitChildren(Number.POSITIVE_INFINITY);
  };
  const visitChildren = (before: number): void => {
    if (!cursor.gotoFirstChild()) return;
    do {
      if (cursor.startIndex >= before) break;
      visit();
    } while (cursor.gotoNextSibling());
    cursor.gotoParent();
  };
  visit();
  cursor.delete();
  if (transform.removeComments) {
    const doc = transform.signatures ? docFlags(comments, text) : null;
    comments.forEach((comment, i) => {
      if (doc?.[i] || isShebang(comment, text)) return;
      edits.push(removal(comment, text));
    });
    edits.sort((a, b) => a.start - b.start);
  }
  return edits;
}

/** A Python module's, class's or function's docstring: a string alone as the first statement. */
function docstringOf(block: Node): Node | null {
  let first = block.firstNamedChild;
  while (first?.type === 'comment') first = first.nextNamedSibling;
  if (first?.type !== 'expression_statement' || first.namedChildCount !== 1) return null;
  const only = first.firstNamedChild;
  return only !== null && (only.type === 'string' || only.type === 'concatenated_string') ? first : null;
}

/** The edit that elides a function's block body, or null when it has none (or nothing in it). */
function elideBody(fn: Node, text: string): Edit | null {
  const body = fn.childForFieldName('body');
  if (body === null) return null;
  const { startIndex: start, endIndex: end } = body;
  if (text[start] === '{' && text[end - 1] === '}') {
    if (text.slice(start + 1, end - 1).trim() === '') return null;
    return { start: start + 1, end: end - 1, text: ` ${ELISION} ` };
  }
  const python = body.type === 'block' && fn.type === 'function_definition';
  if (!python && body.type !== 'body_statement') return null;
  // Python, Ruby: the block starts at its first statement; comments above that statement are the
  // function's children, so the elision starts where the signature ends.
  let anchor = body.previousSibling;
  while (anchor !== null && anchor.type.endsWith('comment')) anchor = anchor.previousSibling;
  const from = anchor?.endIndex ?? start;
  const docstring = python ? docstringOf(body) : null;
  if (python && docstring === null && trivialPython(body)) return null;
  if (docstring !== null && body.namedChildCount === 1) return null;
  const indent = text.slice(text.lastIndexOf('\n', start - 1) + 1, start);
  const lead = text.slice(from, start).includes('\n') && /^[ \t]*$/.test(indent) ? `\n${indent}` : ' ';
  const kept = docstring === null ? '' : `${text.slice(docstring.startIndex, docstring.endIndex)}${lead}`;
  return { start: from, end, text: `${lead}${kept}${ELISION}` };
}

/** A body that is only `pass` or `...`: eliding it gains nothing. */
function trivialPython(block: Node): boolean {
  if (block.namedChildCount !== 1) return false;
  const only = block.firstNamedChild;
  return only?.type === 'pass_statement' || (only?.type === 'expression_statement' && only.text === '...');
}

function isShebang(comment: Comment, text: string): boolean {
  return comment.start === 0 && text.startsWith('#!');
}

const DOC_STYLE = /^(\/\*\*(?!\/)|\/\/\/|\/\/!|\/\*!)/;

/**
 * Which comments document code: in a doc style, or a run of comments on lines of their own
 * directly above code (no blank line between).
 */
function docFlags(comments: Comment[], text: string): boolean[] {
  const flags = new Array<boolean>(comments.length).fill(false);
  const startsAt = new Map(comments.map((c, i) => [c.start, i]));
  for (let i = comments.length - 1; i >= 0; i--) {
    const comment = comments[i] as Comment;
    if (comment.docstring || DOC_STYLE.test(text.slice(comment.start, comment.start + 3))) {
      flags[i] = true;
      continue;
    }
    if (!ownLine(comment, text)) continue;
    let next = comment.end;
    while (next < text.length && /\s/.test(text[next] as string)) next++;
    const gap = text.slice(comment.end, next);
    if (next >= text.length || gap.split('\n').length !== 2) continue;
    const following = startsAt.get(next);
    flags[i] = following === undefined ? !/^[)\]}]/.test(text.slice(next, next + 1)) : (flags[following] ?? false);
  }
  return flags;
}

/** Only whitespace before it on its line. */
function ownLine(comment: Comment, text: string): boolean {
  const lineStart = text.lastIndexOf('\n', comment.start - 1) + 1;
  return /^[ \t]*$/.test(text.slice(lineStart, comment.start));
}

/** The edit that removes a comment: its whole line when nothing else is on it, else it and the blanks before it. */
function removal(comment: Comment, text: string): Edit {
  const { start, end } = comment;
  const lineStart = text.lastIndexOf('\n', start - 1) + 1;
  let lineEnd = text.indexOf('\n', end);
  if (lineEnd === -1) lineEnd = text.length;
  const before = text.slice(lineStart, start);
  const after = text.slice(end, lineEnd);
  const blankBefore = /^[ \t]*$/.test(before);
  const blankAfter = /^[ \t\r]*$/.test(after);
  if (blankBefore && blankAfter) return { start: lineStart, end: Math.min(lineEnd + 1, text.length), text: '' };
  if (blankAfter) return { start: start - (before.length - before.trimEnd().length), end, text: '' };
  // Between code on one line: one space or none, as around it.
  if (/[ \t]/.test(text[start - 1] ?? '')) {
    let to = end;
    while (text[to] === ' ' || text[to] === '\t') to++;
    return { start, end: to, text: '' };
  }
  return { start, end, text: /\s/.test(text[end] ?? ' ') ? '' : ' ' };
}

function applyEdits(text: string, edits: Edit[]): string {
  if (edits.length === 0) return text;
  const pieces: string[] = [];
  let at = 0;
  for (const edit of edits) {
    const start = Math.max(edit.start, at);
    if (edit.end < start) continue;
    pieces.push(text.slice(at, start), edit.text);
    at = edit.end;
  }
  pieces.push(text.slice(at));
  return pieces.join('');
}
