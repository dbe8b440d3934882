import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, readlink, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hashOnThisThread } from '../../src/io/appended-file-hash.js';
import type { HashAppendedFile } from '../../src/io/appended-file-hash.js';
import { IoThreads } from '../../src/io/io-threads.js';
import { TextArtifactWriter } from '../../src/artifacts/write-text-artifacts.js';
import type { BlockSource, EarlierArtifact, OutputLayout } from '../../src/artifacts/write-text-artifacts.js';
import { hashOutput, openOutput } from '../../src/artifacts/spliced-artifact.js';
import type { WrittenArtifact } from '../../src/artifacts/artifact-names.js';
import { readOutput } from './read-output.js';
import { jsonRenderer } from '../../src/render/render-json.js';
import { markdownRenderer } from '../../src/render/render-markdown.js';
import { txtRenderer } from '../../src/render/render-txt.js';
import type { HeadContext, RenderContext, TextFormat } from '../../src/render/render-context.js';
import type { TextFileRecord } from '../../src/types.js';

const HEAD: HeadContext = {
  repository: { name: 'demo', source: 'local', url: null, branch: null, commit: null, subdir: null },
  encoding: 'o200k_base',
  tree: 'demo/\n└── a.txt',
  lite: false,
};

function totals(files: Array<{ record: TextFileRecord }>): RenderContext {
  const bytes = files.reduce((sum, f) => sum + f.record.size_bytes, 0);
  return {
    ...HEAD,
    summary: {
      total_files: files.length,
      total_size: bytes,
      estimated_tokens: 0,
      file_type_breakdown: {},
      tokens_by_type: {},
      files_with_replacements: 0,
      formatted: { total_size: `${bytes} Bytes`, estimated_tokens: '0' },
    },
    assets: [],
    skippedCount: 0,
  };
}

/** Files with contents that take the writer's every path: small ones copied, large ones written as they are, quotes and newlines escaped in JSON. */
function files(count: number, bytes: number): Array<{ record: TextFileRecord; content: Uint8Array }> {
  return Array.from({ length: count }, (_, i) => {
    const text = `file ${i} "quoted" \\ é日\n`.repeat(Math.ceil(bytes / 30)).slice(0, bytes);
    const content = Buffer.from(text, 'utf8');
    return {
      record: { path: `f${i}.txt`, subcategory: 'docs', size_bytes: content.length, tokens_estimate: 0, url: '' },
      content,
    };
  });
}

describe('TextArtifactWriter', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'reposcan-writer-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const io = new IoThreads();
  afterAll(() => io.close());
  const hashers: Array<[string, HashAppendedFile]> = [
    ['on this thread', hashOnThisThread],
    ['on file threads', io.hashFile],
  ];

  it.each(hashers)(
    'puts blocks that came before the head after it, in order, and reports each artifact as written (hashed %s)',
    async (_, hashFile) => {
      // 3 MB before the head: more than the write buffer, so they wait in a file of their own.
      const before = files(30, 100_000);
      const after = [...files(3, 400_000), ...files(20, 5_000)];
      const writer = await TextArtifactWriter.open(dir, [txtRenderer, jsonRenderer], false, hashFile);
      for (const f of before) await writer.addFile(f.record, f.content);
      expect((await readdir(dir)).sort()).toEqual(['.early.json', '.early.txt', 'output.json', 'output.txt']);
      await writer.begin(HEAD);
      for (const f of after) await writer.addFile(f.record, f.content);
      const all = [...before, ...after];
      const written = await writer.finish(totals(all));

      expect((await readdir(dir)).sort()).toEqual(['output.json', 'output.txt']);
      const json = JSON.parse(await readFile(join(dir, 'output.json'), 'utf8')) as {
        tree: string;
        files: Array<{ path: string; content: string }>;
        summary: { total_files: number };
      };
      expect(json.tree).toBe(HEAD.tree);
      expect(json.files.map((f) => f.path)).toEqual(all.map((f) => f.record.path));
      expect(json.files.map((f) => f.content)).toEqual(all.map((f) => Buffer.from(f.content).toString('utf8')));
      expect(json.summary.total_files).toBe(all.length);
      const txt = await readFile(join(dir, 'output.txt'), 'utf8');
      expect(txt.startsWith('Repository: demo\nSource: local\n\nDirectory structure:\ndemo/\n└── a.txt\n\n')).toBe(
        true,
      );
      // The totals close the artifact.
      expect(txt.slice(txt.lastIndexOf('SUMMARY'))).toMatch(/^SUMMARY\n=+\nFiles: 53 \(53 textual, 0 non-textual\)\n/);
      for (const artifact of written) {
        const data = await readFile(join(dir, artifact.file));
        expect(artifact).toEqual({
          format: artifact.format,
          file: artifact.file,
          bytes: data.length,
          sha256: createHash('sha256').update(data).digest('hex'),
        });
      }
    },
  );

  it.each([
    ['copies an earlier artifact block by block', false],
    ['splices an earlier artifact, then a spliced one', true],
  ])('%s, every link swapped, as a fresh write would write it', async (_name, spliced) => {
    const renderers = [txtRenderer, markdownRenderer, jsonRenderer];
    const linked = (commit: string) =>
      files(12000, 0).map((f, i) => {
        const content = Buffer.from('x'.repeat(i % 61));
        const url = `https://git.example/acme/widgets/blob/${commit}/${f.record.path}`;
        return { record: { ...f.record, size_bytes: content.length, url }, content };
      });
    /** One folder's artifacts, ending with the totals of `written`. */
    const write = async (
      name: string,
      written: Array<{ record: TextFileRecord }>,
      add: (writer: TextArtifactWriter) => Promise<void>,
      splice = false,
    ): Promise<{ folder: string; layouts: Record<TextFormat, OutputLayout>; artifacts: WrittenArtifact[] }> => {
      const folder = join(dir, name);
      await mkdir(folder);
      const writer = await TextArtifactWriter.open(
        folder,
        renderers,
        false,
        hashOnThisThread,
        splice ? hashOutput : undefined,
      );
      await writer.begin(HEAD);
      await add(writer);
      const artifacts = await writer.finish(totals(written));
      return { folder, layouts: writer.layouts(), artifacts };
    };
    /** `after` carried from `earlier`, written before with `before`'s links: file 1 is rendered, every other block carried. */
    const carry = async (
      name: string,
      earlier: Awaited<ReturnType<typeof write>>,
      before: ReturnType<typeof linked>,
      after: ReturnType<typeof linked>,
    ) => {
      const outputs = await Promise.all(renderers.map((r) => openOutput(join(earlier.folder, `output.${r.format}`))));
      try {
        const from = Object.fromEntries(
          renderers.map((r, i) => [r.format, { output: outputs[i], layout: earlier.layouts[r.format] }]),
        ) as Record<TextFormat, EarlierArtifact>;
        const blocks: BlockSource[] = after.map((f, index) =>
          index === 1 ? f : { index, from: (before[index] as (typeof before)[number]).record.url, to: f.record.url },
        );
        return await write(name, after, (w) => w.addBlocks(blocks, from), spliced);
      } finally {
        await Promise.all(outputs.map((o) => o.close()));
      }
    };
    /** Each output of `got` reads as `want`'s file, and is reported with its length and SHA-256. */
    const expectSame = async (want: Awaited<ReturnType<typeof write>>, got: Awaited<ReturnType<typeof write>>) => {
      expect(got.layouts).toEqual(want.layouts);
      expect(got.artifacts).toEqual(want.artifacts);
      for (const r of renderers) {
        const expected = await readFile(join(want.folder, `output.${r.format}`));
        expect((await readOutput(join(got.folder, `output.${r.format}`))).equals(expected), r.format).toBe(true);
        // Several of the copy's 1 MiB windows and write buffers.
        expect(expected.length, r.format).toBeGreaterThan(2 ** 21);
      }
    };
    const generations = ['a', 'b', 'c'].map((c) => {
      const files = linked(c.repeat(40));
      files[1] = {
        record: { ...(files[1] as (typeof files)[number]).record, size_bytes: c.length + 2 },
        content: Buffer.from(`${c}${c}${c}`),
      };
      return files;
    });
    const [first, second, third] = generations as [
      ReturnType<typeof linked>,
      ReturnType<typeof linked>,
      ReturnType<typeof linked>,
    ];
    const writeAll = (name: string, written: ReturnType<typeof linked>) =>
      write(name, written, async (w) => {
        for (const f of written) await w.addFile(f.record, f.content);
      });
    const earlier = await writeAll('earlier', first);
    const carried = await carry('carried', earlier, first, second);
    await expectSame(await writeAll('fresh', second), carried);
    if (!spliced) return;

    // Spliced: the new bytes are a piece of their own, the rest the earlier file, linked.
    for (const r of renderers) {
      const [own, linkedPiece, earlierFile] = await Promise.all([
        stat(join(carried.folder, `output.${r.format}.piece-0`)),
        stat(join(carried.folder, `output.${r.format}.piece-1`)),
        stat(join(earlier.folder, `output.${r.format}`)),
      ]);
      expect(linkedPiece.ino).toBe(earlierFile.ino);
      expect(own.size).toBeLessThan(earlierFile.size / 2);
    }
    expect((await readdir(carried.folder)).sort()).toEqual(
      renderers
        .flatMap((r) => [`output.${r.format}.piece-0`, `output.${r.format}.piece-1`, `output.${r.format}.splice`])
        .sort(),
    );
    // Carried again from the spliced one, which is then removed: the new one keeps every byte.
    const again = await carry('again', carried, second, third);
    await rm(carried.folder, { recursive: true });
    await rm(earlier.folder, { recursive: true });
    await expectSame(await writeAll('fresh-again', third), again);
  });

  it('writes straight into the artifacts when the head comes first, leaving no other file', async () => {
    const writer = await TextArtifactWriter.open(dir, [txtRenderer], false, hashOnThisThread);
    await writer.begin(HEAD);
    for (const f of files(5, 10)) await writer.addFile(f.record, f.content);
    await writer.finish(totals(files(5, 10)));
    expect(await readdir(dir)).toEqual(['output.txt']);
  });

  it('refuses to finish an artifact without its head, and abort removes the waiting blocks', async () => {
    const writer = await TextArtifactWriter.open(dir, [txtRenderer], false, hashOnThisThread);
    for (const f of files(20, 100_000)) await writer.addFile(f.record, f.content);
    await expect(writer.finish(totals([]))).rejects.toThrow(/begin\(\)/);
    await writer.abort();
    expect(await readdir(dir)).toEqual(['output.txt']); // the caller removes the artifacts it asked for
  });

  it.runIf(process.platform === 'linux')(
    'abort lets go of every file it had open, the file threads hashing the artifacts included',
    async () => {
      // Descriptors of this process (its threads' too) open on a file in the writer's folder.
      const openInDir = async (): Promise<string[]> => {
        const links = await Promise.all(
          (await readdir('/proc/self/fd')).map((fd) => readlink(join('/proc/self/fd', fd)).catch(() => '')),
        );
        return links.filter((link) => link.startsWith(`${dir}/`));
      };
      const writer = await TextArtifactWriter.open(dir, [txtRenderer, jsonRenderer], false, io.hashFile);
      await writer.begin(HEAD);
      for (const f of files(20, 100_000)) await writer.addFile(f.record, f.content);
      // The writer's two handles, and the hashing threads' two reading them back.
      await expect.poll(openInDir).toHaveLength(4);
      await writer.abort();
      expect(await openInDir()).toEqual([]);
    },
  );
});
