// The provider's published OpenAPI document (reference, version 0.2.273) in this project's names, as
// validators of its response schemas and as the source of its example requests. The document is
// OpenAPI 3.0: `nullable` becomes a null branch, and its case-insensitive `(?i)` patterns a regex flag.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

const DOCUMENT = 'shared/reference/provider-openapi-0.2.273.json';

/**
 * Where the shared reference material lives: `PROVIDER_OPENAPI`, else beside the checkout (as the
 * project README says), else the workplace's shared folder (CI runs on a clone somewhere else).
 */
export const PROVIDER_DOCUMENT_PATH =
  process.env.PROVIDER_OPENAPI ??
  [path.resolve(import.meta.dirname, '../../..', DOCUMENT), path.join('/work', DOCUMENT)].find((p) =>
    existsSync(p),
  ) ??
  path.resolve(import.meta.dirname, '../../..', DOCUMENT);

/** The reference name map: the provider's names → this project's. */
export const NAME_MAP: Readonly<Record<string, string>> = {
  linkedin: 'network',
  company_linkedin: 'company_network',
  linkedin_url_array: 'network_url_array',
  linkedin_industry_category: 'network_industry_category',
  linkedin_profile: 'network_profile',
  linkedin_url: 'network_url',
  linkedin_category: 'network_category',
  google_category: 'listing_category',
  linkedin_posts: 'network_posts',
};

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const rename = (name: string) => NAME_MAP[name] ?? name;

/** The document with property names, required lists, enum values and path segments renamed. */
function renamed(node: Json, parentKey = ''): Json {
  if (Array.isArray(node)) {
    return parentKey === 'required' || parentKey === 'enum'
      ? node.map((item) => (typeof item === 'string' ? rename(item) : item))
      : node.map((item) => renamed(item));
  }
  if (node === null || typeof node !== 'object') return node;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(node)) {
    const name =
      parentKey === 'properties'
        ? rename(key)
        : parentKey === 'paths'
          ? key.split('/').map(rename).join('/')
          : key;
    out[name] = renamed(value, key);
  }
  // Pydantic v1 writes an `Optional[X] = None` field as plain X, outside `required`, and serialises its
  // None as null: a property the schema does not require may be null.
  if (parentKey !== 'properties' && out.properties && typeof out.properties === 'object') {
    const required = new Set(Array.isArray(out.required) ? out.required : []);
    const properties = out.properties as JsonObject;
    for (const [name, property] of Object.entries(properties)) {
      if (!required.has(name)) properties[name] = orNull(property as JsonObject);
    }
  }
  // OpenAPI 3.0 `nullable: true` admits null whatever the rest of the schema says.
  if (out.nullable === true) {
    delete out.nullable;
    return orNull(out);
  }
  return out;
}

function orNull(schema: JsonObject): JsonObject {
  const branches = schema.anyOf;
  if (Array.isArray(branches) && branches.some((b) => (b as JsonObject).type === 'null')) return schema;
  return { anyOf: [schema, { type: 'null' }] };
}

export interface ProviderDocument {
  paths: Record<string, Record<string, ProviderOperation>>;
  components: { schemas: Record<string, JsonObject> };
}
export interface ProviderOperation {
  operationId: string;
  parameters?: { name: string; in: string; required?: boolean; schema: JsonObject }[];
  requestBody?: { content: { 'application/json': { schema: JsonObject } } };
  responses: Record<string, { content?: { 'application/json'?: { schema: JsonObject } } }>;
}

let loaded: ProviderDocument | undefined;

/** The provider document in this project's names (read once). */
export function providerDocument(): ProviderDocument {
  loaded ??= renamed(
    JSON.parse(readFileSync(PROVIDER_DOCUMENT_PATH, 'utf8')) as Json,
  ) as unknown as ProviderDocument;
  return loaded;
}

/**
 * The document's patterns are Python's: `(?i)...` becomes JavaScript's `i` flag, and without the `u`
 * flag, so that Python's escapes of ordinary characters (`\ `, `\-`) stay valid.
 */
function regExp(pattern: string, flags: string): RegExp {
  const plain = flags.replace('u', '');
  return pattern.startsWith('(?i)') ? new RegExp(pattern.slice(4), `${plain}i`) : new RegExp(pattern, plain);
}
regExp.code = 'regExp';

let ajv: Ajv | undefined;
const validators = new Map<string, ValidateFunction>();

function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

/**
 * The validator of the provider's response schema for an operation and status, or undefined when the
 * document declares no such response (or an empty schema, which any body satisfies).
 */
export function responseValidator(
  openApiPath: string,
  method: string,
  status: number,
): ValidateFunction | undefined {
  const document = providerDocument();
  const schema =
    document.paths[openApiPath]?.[method.toLowerCase()]?.responses[String(status)]?.content?.[
      'application/json'
    ]?.schema;
  if (!schema || Object.keys(schema).length === 0) return undefined;
  const pointer = ['paths', openApiPath, method.toLowerCase(), 'responses', String(status), 'content']
    .map(escapePointer)
    .join('/');
  return validatorAt(`${pointer}/application~1json/schema`);
}

/** The validator of a component schema of the document (`FirmographicsOutputSchema`, `Prospect`, ...). */
export function componentValidator(name: string): ValidateFunction {
  if (!providerDocument().components.schemas[name]) throw new Error(`no component ${name}`);
  return validatorAt(`components/schemas/${escapePointer(name)}`);
}

function validatorAt(pointer: string): ValidateFunction {
  if (!ajv) {
    ajv = new Ajv({ strict: false, allErrors: true, code: { regExp } });
    (addFormatsModule as unknown as (a: Ajv) => void)(ajv);
    ajv.addSchema(providerDocument(), 'provider');
  }
  let validator = validators.get(pointer);
  if (!validator) {
    validator = ajv.compile({ $ref: `provider#/${pointer}` });
    validators.set(pointer, validator);
  }
  return validator;
}

/** Whether the provider document declares this status of the operation (with a schema or without). */
export function declaresResponse(openApiPath: string, method: string, status: number): boolean {
  return (
    providerDocument().paths[openApiPath]?.[method.toLowerCase()]?.responses[String(status)] !== undefined
  );
}

/** Whether the provider document declares this operation at all. */
export function declaresOperation(openApiPath: string, method: string): boolean {
  return providerDocument().paths[openApiPath]?.[method.toLowerCase()] !== undefined;
}

/** Short `path: message` lines of a failed validation. */
export function violations(validator: ValidateFunction): string[] {
  return (validator.errors ?? [])
    .filter((e) => e.keyword !== 'anyOf' && !(e.keyword === 'type' && e.params.type === 'null'))
    .map((e) => {
      const message = e.keyword === 'pattern' ? 'must match the pattern' : (e.message ?? e.keyword);
      return `${e.instancePath || '/'} ${message}`;
    });
}

function resolve(schema: JsonObject): JsonObject {
  const ref = schema.$ref;
  if (typeof ref !== 'string') return schema;
  const name = ref.split('/').pop() as string;
  return providerDocument().components.schemas[name] as JsonObject;
}

/** The non-null branch of a schema the renaming made nullable. */
function nonNull(schema: JsonObject): JsonObject {
  const branches = schema.anyOf;
  if (Array.isArray(branches) && branches.length === 2 && (branches[1] as JsonObject).type === 'null') {
    return branches[0] as JsonObject;
  }
  return schema;
}

/**
 * The example the document gives for a value, built up from the examples of its parts: a schema's own
 * `example` first, else an object of its properties that have one, else an array of one example item.
 * Undefined when the document gives none.
 */
export function exampleOf(input: JsonObject): Json | undefined {
  const schema = resolve(nonNull(input));
  if ('example' in input) return input.example;
  if ('example' in schema) return schema.example;
  const allOf = schema.allOf;
  if (Array.isArray(allOf) && allOf.length === 1) return exampleOf(allOf[0] as JsonObject);
  if (schema.properties && typeof schema.properties === 'object') {
    const out: JsonObject = {};
    for (const [name, property] of Object.entries(schema.properties as JsonObject)) {
      const example = exampleOf(property as JsonObject);
      if (example !== undefined) out[name] = example;
    }
    return Object.keys(out).length > 0 ? out : undefined;
  }
  if (schema.items && typeof schema.items === 'object') {
    const item = exampleOf(schema.items as JsonObject);
    return item === undefined ? undefined : [item];
  }
  return undefined;
}

/** The properties of an object schema (through `$ref` and `allOf`), by name. */
export function propertiesOf(input: JsonObject): Record<string, JsonObject> {
  const schema = resolve(nonNull(input));
  const allOf = schema.allOf;
  if (Array.isArray(allOf) && allOf.length === 1) return propertiesOf(allOf[0] as JsonObject);
  return (schema.properties ?? {}) as Record<string, JsonObject>;
}

/** The request body schema of an operation. */
export function requestSchema(openApiPath: string, method: string): JsonObject | undefined {
  return providerDocument().paths[openApiPath]?.[method.toLowerCase()]?.requestBody?.content[
    'application/json'
  ].schema;
}

export type { Json, JsonObject };
