import { beforeAll, describe, expect, it } from 'vitest'
import { loadParser, parseSql } from '../ast/parse.js'
import { listsCatalogWholesale } from './catalog-listing.js'

const wholesale = (sql: string) => listsCatalogWholesale(parseSql(sql)[0]?.stmt as never)

describe('listsCatalogWholesale', () => {
  beforeAll(() => loadParser())

  it('takes statements that name no object by key or name for listings', () => {
    for (const sql of [
      'SELECT * FROM pg_catalog.pg_class c JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid',
      "SELECT * FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname LIKE 'wide' AND c.relname LIKE '%'",
      "SELECT * FROM pg_catalog.pg_class c WHERE c.relname OPERATOR(pg_catalog.~) '^(.*)$' COLLATE pg_catalog.default",
      "SELECT * FROM pg_catalog.pg_class c LEFT JOIN pg_catalog.pg_description d ON d.objoid = c.oid LEFT JOIN pg_catalog.pg_class dc ON dc.oid = d.classoid AND dc.relname = 'pg_class'",
      "SELECT * FROM pg_catalog.pg_description d WHERE d.classoid = 'pg_catalog.pg_class'::pg_catalog.regclass",
      'SELECT * FROM pg_catalog.pg_class c WHERE c.relnamespace = 2200',
      "SELECT * FROM pg_catalog.pg_class c WHERE c.relname NOT LIKE 'pg_%' AND c.relname !~ '^sql_'",
      "SELECT * FROM pg_catalog.pg_class c WHERE c.relname <> 'x' AND c.oid <> 16390",
    ])
      expect(wholesale(sql), sql).toBe(true)
  })

  it('takes statements that name an object by key, name or a pattern with a literal for lookups', () => {
    for (const sql of [
      "SELECT * FROM pg_catalog.pg_attribute a WHERE a.attrelid = '16390'",
      "SELECT * FROM pg_catalog.pg_attribute a WHERE a.attrelid = 'wide.t1'::pg_catalog.regclass",
      'SELECT * FROM pg_catalog.pg_attribute a WHERE a.attrelid = $1',
      "SELECT * FROM pg_catalog.pg_class c JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid WHERE c.relname = 't05000'",
      "SELECT * FROM pg_catalog.pg_class c WHERE c.relname LIKE 't05000'",
      "SELECT * FROM pg_catalog.pg_class c WHERE c.relname OPERATOR(pg_catalog.~) '^(t05000)$' COLLATE pg_catalog.default",
      "SELECT * FROM pg_catalog.pg_class c WHERE c.relname IN ('a', 'b')",
      "SELECT * FROM pg_catalog.pg_class c WHERE c.relname ILIKE 'Orders%'",
      "SELECT * FROM pg_catalog.pg_class c WHERE c.relname::text = 't05000'",
      'SELECT * FROM pg_catalog.pg_attribute a WHERE a.attrelid::pg_catalog.regclass = $1::pg_catalog.regclass',
      "SELECT * FROM pg_catalog.pg_class c WHERE c.relname SIMILAR TO 'orders_[0-9]+'",
      "SELECT * FROM pg_catalog.pg_class c WHERE c.oid = (SELECT oid FROM pg_catalog.pg_class WHERE relname = 'x')",
      "SELECT * FROM pg_catalog.pg_class c JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND c.relname = 'x'",
    ])
      expect(wholesale(sql), sql).toBe(false)
  })
})
