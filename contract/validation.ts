// Request and response checking against the contract, with failures expressed as FastAPI/Pydantic-v1
// 422 detail items, so that the sandbox's 422 bodies and the client's fail-fast errors are identical.
import type { TSchema } from 'typebox';
import { Compile, type Validator } from 'typebox/compile';
import type { TLocalizedValidationError } from 'typebox/error';
import { Value } from 'typebox/value';
import type { RouteSpec } from './routes.js';
import type { ValidationDetailItem } from './schemas/common.js';

/** Where a value sits in the request, as FastAPI's first `loc` segment. */
export type RequestPart = 'body' | 'query' | 'path' | 'header';

const validators = new WeakMap<TSchema, Validator>();

/** A compiled (JIT) validator for a schema, built once per schema object. */
export function compiledValidator(schema: TSchema): Validator {
  let validator = validators.get(schema);
  if (!validator) {
    validator = Compile(schema);
    validators.set(schema, validator);
  }
  return validator;
}

type Loc = (string | number)[];

/** JSON pointer → location segments; indexes of arrays become numbers, as Pydantic writes them. */
function pointerToLoc(root: unknown, pointer: string): Loc {
  if (pointer === '') return [];
  const loc: Loc = [];
  let node: unknown = root;
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(node) && /^\d+$/.test(key)) {
      const index = Number(key);
      loc.push(index);
      node = node[index];
    } else {
      loc.push(key);
      node = node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined;
    }
  }
  return loc;
}

function valueAt(root: unknown, loc: Loc): unknown {
  let node = root;
  for (const key of loc) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string | number, unknown>)[key];
  }
  return node;
}

const TYPE_MESSAGES: Record<string, [msg: string, type: string]> = {
  integer: ['value is not a valid integer', 'type_error.integer'],
  number: ['value is not a valid float', 'type_error.float'],
  string: ['str type expected', 'type_error.str'],
  boolean: ['value could not be parsed to a boolean', 'type_error.bool'],
  array: ['value is not a valid list', 'type_error.list'],
  object: ['value is not a valid dict', 'type_error.dict'],
};

function quoteList(values: readonly unknown[]): string {
  return values.map((v) => (typeof v === 'string' ? `'${v}'` : JSON.stringify(v))).join(', ');
}

/** One TypeBox error → one Pydantic-v1 item (message, type, ctx), for the given location. */
function describe(error: TLocalizedValidationError, loc: Loc, value: unknown): ValidationDetailItem {
  const params = error.params as Record<string, unknown>;
  const limit = params.limit as number;
  switch (error.keyword) {
    case 'type': {
      if (value === null)
        return { loc, msg: 'none is not an allowed value', type: 'type_error.none.not_allowed' };
      const expected = Array.isArray(params.type) ? String(params.type[0]) : String(params.type);
      const [msg, type] = TYPE_MESSAGES[expected] ?? [`${expected} type expected`, `type_error.${expected}`];
      return { loc, msg, type };
    }
    case 'maximum':
      return {
        loc,
        msg: `ensure this value is less than or equal to ${limit}`,
        type: 'value_error.number.not_le',
        ctx: { limit_value: limit },
      };
    case 'minimum':
      return {
        loc,
        msg: `ensure this value is greater than or equal to ${limit}`,
        type: 'value_error.number.not_ge',
        ctx: { limit_value: limit },
      };
    case 'exclusiveMaximum':
      return {
        loc,
        msg: `ensure this value is less than ${limit}`,
        type: 'value_error.number.not_lt',
        ctx: { limit_value: limit },
      };
    case 'exclusiveMinimum':
      return {
        loc,
        msg: `ensure this value is greater than ${limit}`,
        type: 'value_error.number.not_gt',
        ctx: { limit_value: limit },
      };
    case 'maxItems':
      return {
        loc,
        msg: `ensure this value has at most ${limit} items`,
        type: 'value_error.list.max_items',
        ctx: { limit_value: limit },
      };
    case 'minItems':
      return {
        loc,
        msg: `ensure this value has at least ${limit} items`,
        type: 'value_error.list.min_items',
        ctx: { limit_value: limit },
      };
    case 'maxLength':
      return {
        loc,
        msg: `ensure this value has at most ${limit} characters`,
        type: 'value_error.any_str.max_length',
        ctx: { limit_value: limit },
      };
    case 'minLength':
      return {
        loc,
        msg: `ensure this value has at least ${limit} characters`,
        type: 'value_error.any_str.min_length',
        ctx: { limit_value: limit },
      };
    case 'pattern': {
      const pattern = String(params.pattern instanceof RegExp ? params.pattern.source : params.pattern);
      return {
        loc,
        msg: `string does not match regex "${pattern}"`,
        type: 'value_error.str.regex',
        ctx: { pattern },
      };
    }
    case 'enum': {
      const permitted = params.allowedValues as unknown[];
      return {
        loc,
        msg: `value is not a valid enumeration member; permitted: ${quoteList(permitted)}`,
        type: 'type_error.enum',
        ctx: { enum_values: permitted },
      };
    }
    case 'const':
      return {
        loc,
        msg: `unexpected value; permitted: ${quoteList([params.allowedValue])}`,
        type: 'value_error.const',
        ctx: { given: value, permitted: [params.allowedValue] },
      };
    case 'format':
      return params.format === 'date-time'
        ? { loc, msg: 'invalid datetime format', type: 'value_error.datetime' }
        : {
            loc,
            msg: `invalid ${String(params.format)} format`,
            type: `value_error.${String(params.format)}`,
          };
    case 'uniqueItems':
      return { loc, msg: 'the list has duplicated items', type: 'value_error.list.unique_items' };
    default:
      return { loc, msg: error.message, type: 'value_error' };
  }
}

/**
 * TypeBox errors → FastAPI detail items, located under `part`. Unions with `null` report only the
 * failure of their other branch, and a wrong type hides the other failures at the same place, as
 * Pydantic does; missing and extra keys give one item per key.
 */
export function schemaErrorsToDetail(
  errors: readonly TLocalizedValidationError[],
  part: RequestPart,
  value: unknown,
): ValidationDetailItem[] {
  const dropped = new Set<TLocalizedValidationError>();
  for (const union of errors.filter((e) => e.keyword === 'anyOf')) {
    const prefix = `${union.schemaPath}/anyOf/`;
    const branches = errors.filter((e) => e.schemaPath.startsWith(prefix));
    const nullBranches = branches.filter(
      (e) =>
        e.keyword === 'type' &&
        (e.params as { type: unknown }).type === 'null' &&
        e.instancePath === union.instancePath,
    );
    nullBranches.forEach((e) => dropped.add(e));
    if (branches.length > nullBranches.length) dropped.add(union);
  }
  const kept = errors.filter((e) => !dropped.has(e) && e.keyword !== 'boolean');
  const typed = new Set(kept.filter((e) => e.keyword === 'type').map((e) => e.instancePath));

  const detail: ValidationDetailItem[] = [];
  const seen = new Set<string>();
  const push = (item: ValidationDetailItem) => {
    const key = JSON.stringify([item.loc, item.type]);
    if (!seen.has(key)) {
      seen.add(key);
      detail.push(item);
    }
  };
  for (const error of kept) {
    if (error.keyword !== 'type' && typed.has(error.instancePath)) continue;
    const loc: Loc = [part, ...pointerToLoc(value, error.instancePath)];
    if (error.keyword === 'required') {
      for (const name of error.params.requiredProperties) {
        push({ loc: [...loc, name], msg: 'field required', type: 'value_error.missing' });
      }
    } else if (error.keyword === 'additionalProperties') {
      for (const name of error.params.additionalProperties) {
        push({ loc: [...loc, name], msg: 'extra fields not permitted', type: 'value_error.extra' });
      }
    } else {
      push(describe(error, loc, valueAt(value, loc.slice(1))));
    }
  }
  return detail;
}

/** 422 item for a required body that is absent or empty. */
export function missingBodyDetail(): ValidationDetailItem {
  return { loc: ['body'], msg: 'field required', type: 'value_error.missing' };
}

/** 422 item for a body that is not valid JSON; `position` is the character offset of the failure. */
export function jsonDecodeDetail(raw: string, position = 0): ValidationDetailItem {
  const before = raw.slice(0, position);
  const lineno = before.split('\n').length;
  const colno = position - before.lastIndexOf('\n');
  return {
    loc: ['body', position],
    msg: `Expecting value: line ${lineno} column ${colno} (char ${position})`,
    type: 'value_error.jsondecode',
    ctx: { msg: 'Expecting value', pos: position, lineno, colno },
  };
}

/** The parts of an incoming or outgoing request, as plain values (query and path values may be strings). */
export interface RequestParts {
  body?: unknown;
  query?: unknown;
  params?: unknown;
  headers?: unknown;
}

export type RequestCheck =
  | { ok: true; body: unknown; query: unknown; params: unknown }
  | { ok: false; detail: ValidationDetailItem[] };

/**
 * Checks a request against its route: schemas first (query and path values converted from strings,
 * defaults applied), then the route's cross-field rules when every schema passed.
 */
export function checkRequest(route: RouteSpec, parts: RequestParts): RequestCheck {
  const detail: ValidationDetailItem[] = [];
  const convert = (schema: TSchema | undefined, value: unknown, part: RequestPart): unknown => {
    if (!schema) return value;
    // Clone first: Convert and Default may change the value in place, and it belongs to the caller.
    const candidate = Value.Default(schema, Value.Convert(schema, Value.Clone(value ?? {})));
    const validator = compiledValidator(schema);
    if (!validator.Check(candidate))
      detail.push(...schemaErrorsToDetail(validator.Errors(candidate), part, candidate));
    return candidate;
  };
  const params = convert(route.params, parts.params, 'path');
  const query = convert(route.querystring, parts.query, 'query');
  if (route.headers && parts.headers !== undefined) {
    // Header values are strings already: check in place, no copy on the hot path.
    const validator = compiledValidator(route.headers);
    if (!validator.Check(parts.headers)) {
      detail.push(...schemaErrorsToDetail(validator.Errors(parts.headers), 'header', parts.headers));
    }
  }
  let body = parts.body;
  if (route.body) {
    if (body === undefined) {
      detail.push(missingBodyDetail());
    } else {
      const validator = compiledValidator(route.body);
      if (!validator.Check(body)) detail.push(...schemaErrorsToDetail(validator.Errors(body), 'body', body));
    }
  } else {
    body = undefined;
  }
  if (detail.length === 0 && route.rules) detail.push(...route.rules({ body, query, params }));
  return detail.length === 0 ? { ok: true, body, query, params } : { ok: false, detail };
}

/** Checks a response body against a schema; `errors` are short `path: message` lines for error messages. */
export function checkResponse(
  schema: TSchema,
  body: unknown,
): { ok: true } | { ok: false; errors: string[] } {
  const validator = compiledValidator(schema);
  if (validator.Check(body)) return { ok: true };
  return {
    ok: false,
    errors: validator.Errors(body).map((e) => `${e.instancePath || '/'}: ${e.message}`),
  };
}
