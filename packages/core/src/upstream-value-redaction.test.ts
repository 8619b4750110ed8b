import { beforeAll, describe, expect, it } from 'vitest'
import { loadParser } from './ast/parse.js'
import { quotesValue } from './upstream-value-redaction.js'

beforeAll(() => loadParser())

const cases = [
  {
    name: 'a quoted value the statement did not write',
    text: 'invalid input syntax for type integer: "123-45-6789"',
    sql: 'SELECT id FROM people WHERE ssn::int = 1',
    quotes: true,
  },
  {
    name: 'a number outside quotes',
    text: 'requested character too large for encoding: 1234567',
    sql: 'SELECT id FROM people WHERE chr(n) = $1',
    quotes: true,
  },
  {
    name: 'a single-quoted fragment',
    text: "line 1: Start tag expected, '<' not found",
    sql: 'SELECT id FROM people WHERE xmlparse(content ssn) IS NULL',
    quotes: true,
  },
  {
    name: 'a value that only contains a written literal',
    text: 'invalid input syntax for type integer: "abc-1"',
    sql: "SELECT 'abc'::int",
    quotes: true,
  },
  {
    name: 'a string literal the statement wrote',
    text: 'invalid input syntax for type integer: "abc"',
    sql: "SELECT 'abc'::int",
    quotes: false,
  },
  {
    name: 'a name the statement wrote, however it was spelled',
    text: 'column "nme" does not exist',
    sql: 'SELECT "NME" FROM people',
    quotes: true,
  },
  {
    name: 'a name as PostgreSQL folds it',
    text: 'column "nme" does not exist',
    sql: 'SELECT NME FROM people',
    quotes: false,
  },
  { name: 'no value at all', text: 'division by zero', sql: 'SELECT 1/0', quotes: false },
  {
    name: 'text that does not parse',
    text: 'invalid input syntax for type integer: "x"',
    sql: "SELECT 'x'::int FROM (",
    quotes: true,
  },
]

describe('quotesValue', () => {
  it.each(cases)('$name', ({ text, sql, quotes }) => {
    expect(quotesValue(text, sql)).toBe(quotes)
  })
})
