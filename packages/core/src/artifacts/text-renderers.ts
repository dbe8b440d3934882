import type { FormatRenderer, TextFormat } from '../render/render-context.js';
import { jsonRenderer } from '../render/render-json.js';
import { markdownRenderer } from '../render/render-markdown.js';
import { txtRenderer } from '../render/render-txt.js';

/** The renderer of each text format, by name: a name crosses to a thread, a renderer does not. */
export const TEXT_RENDERERS: Record<TextFormat, FormatRenderer> = { txt: txtRenderer, md: markdownRenderer, json: jsonRenderer };

/** Every text artifact a scan writes, in the order they are written. */
export const TEXT_FORMATS: readonly TextFormat[] = ['txt', 'md', 'json'];
