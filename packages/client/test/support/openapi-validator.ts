import { readFile } from 'node:fs/promises';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { parse } from 'yaml';

// ajv-formats is CommonJS: NodeNext types the default import as module.exports, whose
// `default` is the plugin (module.exports.default === module.exports at run time).
const addFormats = addFormatsModule.default;

type Json = Record<string, unknown>;

interface ResponseSpec {
  description: string;
  headers?: Record<string, Json>;
  content?: Record<string, { schema: Json }>;
}

interface Spec {
  paths: Record<string, Record<string, { responses: Record<string, ResponseSpec> }>>;
  components: { schemas: Record<string, Json> };
}

export interface CheckedResponse {
  status: number;
  /** The declared content type that matched, or null for a response without a body. */
  contentType: string | null;
  /** Parsed JSON for JSON media types, the text for text media types, the bytes otherwise. */
  body: unknown;
}

const COMPONENTS_ID = 'urn:reposcan:openapi-components';

/**
 * Checks live HTTP responses against the checked-in openapi.yaml: the path and method must be
 * an operation of the spec, the status one it lists, the content type one it declares for that
 * status, and the body valid against the declared schema (JSON Schema 2020-12, by ajv).
 * Anything the spec does not describe is an error.
 */
export class OpenApiValidator {
  readonly #spec: Spec;
  readonly #ajv: Ajv2020;
  readonly #compiled = new Map<string, ValidateFunction>();
  /** Every (operation, status) a test has checked, to show what the suite covers. */
  readonly seen = new Set<string>();

  private constructor(spec: Spec) {
    this.#spec = spec;
    this.#ajv = new Ajv2020({ strict: true, allErrors: true });
    addFormats(this.#ajv);
    // OpenAPI annotations and formats that carry no validation.
    this.#ajv.addKeyword('example');
    this.#ajv.addFormat('binary', true);
    this.#ajv.addSchema({ $id: COMPONENTS_ID, $defs: toAjvRefs(spec.components.schemas) });
  }

  static async load(path: string | URL): Promise<OpenApiValidator> {
    return new OpenApiValidator(parse(await readFile(path, 'utf8')) as Spec);
  }

  /** The component schema `name` as a validator (for payloads the spec names in prose, e.g. SSE data). */
  component(name: string): (value: unknown) => void {
    if (!this.#spec.components.schemas[name]) throw new Error(`openapi.yaml has no component ${name}`);
    const validate = this.#compile({ $ref: `#/components/schemas/${name}` });
    return (value) => assertValid(validate, value, `component ${name}`);
  }

  /** Read `response` to its end and check it against `method path` (a template such as /v1/scans/{scan_id}). */
  async check(method: string, path: string, response: Response): Promise<CheckedResponse> {
    const where = `${method.toUpperCase()} ${path} → ${response.status}`;
    const operation = this.#spec.paths[path]?.[method.toLowerCase()];
    if (!operation) throw new Error(`${where}: openapi.yaml has no operation ${method.toUpperCase()} ${path}`);
    const declared =
      operation.responses[String(response.status)] ??
      operation.responses[`${String(response.status)[0]}XX`] ??
      operation.responses.default;
    if (!declared)
      throw new Error(
        `${where}: status ${response.status} is not described (the spec lists ${Object.keys(operation.responses).join(', ')})`,
      );
    this.seen.add(`${method.toUpperCase()} ${path} ${response.status}`);

    for (const header of Object.keys(declared.headers ?? {})) {
      if (!response.headers.has(header)) throw new Error(`${where}: declared header ${header} is missing`);
    }
    const bytes = Buffer.from(await response.arrayBuffer());
    const header = response.headers.get('content-type');
    if (!declared.content) {
      if (bytes.length > 0)
        throw new Error(
          `${where}: the spec declares no body, got ${bytes.length} bytes (${header ?? 'no content type'})`,
        );
      return { status: response.status, contentType: null, body: null };
    }
    if (!header)
      throw new Error(`${where}: no Content-Type, the spec declares ${Object.keys(declared.content).join(', ')}`);
    const contentType = Object.keys(declared.content).find((type) => sameMediaType(type, header));
    if (!contentType)
      throw new Error(
        `${where}: Content-Type ${header} is not described (the spec declares ${Object.keys(declared.content).join(', ')})`,
      );

    const schema = declared.content[contentType]!.schema;
    const body = decodeBody(contentType, schema, bytes, where);
    assertValid(this.#compile(schema), body, where);
    return { status: response.status, contentType, body };
  }

  #compile(schema: Json): ValidateFunction {
    const key = JSON.stringify(schema);
    let validate = this.#compiled.get(key);
    if (!validate) {
      validate = this.#ajv.compile(toAjvRefs(schema) as Json);
      this.#compiled.set(key, validate);
    }
    return validate;
  }
}

/**
 * A declared type with parameters (`text/plain; charset=utf-8`) must match them exactly; a bare
 * one (`application/json`) matches its media type with any parameters.
 */
function sameMediaType(declared: string, actual: string): boolean {
  const norm = (value: string): string[] =>
    value
      .toLowerCase()
      .split(';')
      .map((part) => part.trim())
      .filter(Boolean);
  const [d, ...dParams] = norm(declared);
  const [a, ...aParams] = norm(actual);
  if (d !== a) return false;
  return dParams.length === 0 || JSON.stringify(dParams.sort()) === JSON.stringify(aParams.sort());
}

function decodeBody(contentType: string, schema: Json, bytes: Buffer, where: string): unknown {
  if (schema.format === 'binary') return bytes.toString('latin1');
  if (/^application\/([\w.+-]+\+)?json\b/i.test(contentType)) {
    try {
      return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes)) as unknown;
    } catch (error) {
      throw new Error(`${where}: body is not UTF-8 JSON: ${(error as Error).message}`, { cause: error });
    }
  }
  return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
}

function assertValid(validate: ValidateFunction, value: unknown, where: string): void {
  if (validate(value)) return;
  const errors = (validate.errors ?? []).map(
    (e: ErrorObject) => `${e.instancePath || '(root)'} ${e.message ?? ''} ${JSON.stringify(e.params)}`,
  );
  throw new Error(
    `${where}: body does not match the spec:\n  ${errors.join('\n  ')}\nbody: ${JSON.stringify(value).slice(0, 2000)}`,
  );
}

/** `#/components/schemas/X` → the components schema registered with ajv. */
function toAjvRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toAjvRefs);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [
        k,
        k === '$ref' && typeof v === 'string'
          ? v.replace('#/components/schemas/', `${COMPONENTS_ID}#/$defs/`)
          : toAjvRefs(v),
      ]),
    );
  }
  return value;
}
