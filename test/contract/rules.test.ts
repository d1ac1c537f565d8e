import { describe, expect, it } from 'vitest';
import {
  checkFetchSize,
  checkRangeFilter,
  checkRequest,
  FULL_NAME_WITHOUT_COMPANY_MSG,
  jsonDecodeDetail,
  missingBodyDetail,
  RANGE_EMPTY_MSG,
  RANGE_INVERTED_MSG,
  ROUTES,
  SIZE_BELOW_PAGE_SIZE_MSG,
} from '../../contract/index.js';

describe('cross-field rules', () => {
  it('size below page_size is a root error of the body', () => {
    expect(checkFetchSize({ size: 10, page_size: 20 })).toEqual([
      { loc: ['body', '__root__'], msg: SIZE_BELOW_PAGE_SIZE_MSG, type: 'value_error' },
    ]);
    expect(checkFetchSize({ size: 20, page_size: 20 })).toEqual([]);
    expect(checkRequest(ROUTES.fetchProspects, { body: { mode: 'full', size: 5, page_size: 10 } })).toEqual({
      ok: false,
      detail: [
        {
          loc: ['body', '__root__'],
          msg: "'size' must be greater than or equal to 'page_size'",
          type: 'value_error',
        },
      ],
    });
    expect(checkRequest(ROUTES.fetchBusinesses, { body: { mode: 'full', size: 5, page_size: 10 } }).ok).toBe(
      false,
    );
  });

  it('a range filter needs a bound, and gte ≤ lte', () => {
    expect(checkRangeFilter('current_role_months', {})).toEqual([
      {
        loc: ['body', 'filters', 'current_role_months', '__root__'],
        msg: RANGE_EMPTY_MSG,
        type: 'value_error',
      },
    ]);
    expect(checkRangeFilter('total_experience_months', { gte: 24, lte: 12 })).toEqual([
      {
        loc: ['body', 'filters', 'total_experience_months', '__root__'],
        msg: RANGE_INVERTED_MSG,
        type: 'value_error',
      },
    ]);
    expect(checkRangeFilter('total_experience_months', { gte: 12, lte: 12 })).toEqual([]);
    const body = {
      mode: 'full',
      size: 100,
      page_size: 10,
      filters: { total_experience_months: { gte: 24, lte: 12 } },
    };
    expect(checkRequest(ROUTES.fetchProspects, { body })).toMatchObject({
      ok: false,
      detail: [{ loc: ['body', 'filters', 'total_experience_months', '__root__'] }],
    });
  });

  it('prospect match: full_name without company_name is refused at its index', () => {
    const body = {
      prospects_to_match: [
        { full_name: 'Ada Lovelace', company_name: 'Analytical' },
        { full_name: 'Alan Turing' },
        { email: 'a@b.c' },
      ],
    };
    expect(checkRequest(ROUTES.matchProspects, { body })).toEqual({
      ok: false,
      detail: [
        {
          loc: ['body', 'prospects_to_match', 1, '__root__'],
          msg: FULL_NAME_WITHOUT_COMPANY_MSG,
          type: 'value_error',
        },
      ],
    });
  });

  it('rules run only once the schemas pass, as Pydantic root validators do', () => {
    const result = checkRequest(ROUTES.fetchProspects, { body: { mode: 'full', size: 5, page_size: 101 } });
    expect(result).toMatchObject({ ok: false, detail: [{ loc: ['body', 'page_size'] }] });
    expect(result.ok ? [] : result.detail).toHaveLength(1);
  });
});

describe('body-level 422 items', () => {
  it('describe a missing body and malformed JSON', () => {
    expect(missingBodyDetail()).toEqual({
      loc: ['body'],
      msg: 'field required',
      type: 'value_error.missing',
    });
    expect(jsonDecodeDetail('{"a":\n}', 6)).toEqual({
      loc: ['body', 6],
      msg: 'Expecting value: line 2 column 1 (char 6)',
      type: 'value_error.jsondecode',
      ctx: { msg: 'Expecting value', pos: 6, lineno: 2, colno: 1 },
    });
  });
});
