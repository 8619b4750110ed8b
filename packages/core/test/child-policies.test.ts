import { PGlite } from '@electric-sql/pglite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Catalog } from '../src/catalog.types.js'
import { readCatalogWithViews } from './fixtures/pglite.js'
import { makeSession, policy, run, runError } from './fixtures/session.js'

/**
 * A child's or partition's own policies hold when its rows are read through a parent: the
 * parent's scan reads each child with different rules in a branch of its own.
 */
const SETUP = `
CREATE TABLE events (id int, tenant int NOT NULL, note text) PARTITION BY LIST (tenant);
CREATE TABLE events_1 PARTITION OF events FOR VALUES IN (1);
CREATE TABLE events_2 PARTITION OF events FOR VALUES IN (2) PARTITION BY RANGE (id);
CREATE TABLE events_2_low PARTITION OF events_2 FOR VALUES FROM (0) TO (100);
CREATE TABLE events_2_high PARTITION OF events_2 FOR VALUES FROM (100) TO (1000);
INSERT INTO events VALUES (1, 1, 'one'), (2, 2, 'two'), (150, 2, 'high');
CREATE TABLE person (id int, name text, ssn text);
CREATE TABLE student (gpa float8) INHERITS (person);
CREATE TABLE grad () INHERITS (student);
INSERT INTO person VALUES (1, 'p', '111');
INSERT INTO student VALUES (2, 's', '222', 3.0);
INSERT INTO grad VALUES (3, 'g', '333', 4.0);
CREATE VIEW v_events AS SELECT id, note FROM events;
CREATE FUNCTION twice(int) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT $1 * 2';
CREATE VIEW v_twice AS SELECT id, twice(id) AS d FROM person;
`

let db: PGlite
let catalog: Catalog
beforeAll(async () => {
  db = await PGlite.create()
  await db.exec(SETUP)
  catalog = await readCatalogWithViews(db, ['public'])
})
afterAll(() => db?.close())

const only = (tables: string[], columns?: string[]) => ({
  schemas: ['public'],
  tables,
  ...(columns ? { columns } : {}),
})

describe("a child's own policies hold through its parents", () => {
  it('filters the rows of a filtered partition read through the parent', async () => {
    const session = await makeSession(catalog, {
      user: { attributes: { tenant: 1 } },
      policies: [
        policy('row_filter', {
          target: only(['events_*']),
          filterExpression: 'tenant = {user.tenant}',
        }),
      ],
    })
    expect(await run(db, session, 'SELECT id, note FROM events ORDER BY id')).toEqual([
      { id: 1, note: 'one' },
    ])
    expect(await run(db, session, 'SELECT id FROM events_2')).toEqual([])
    expect(await run(db, session, 'SELECT id FROM v_events')).toEqual([{ id: 1 }])
    expect(await run(db, session, 'SELECT e::text AS row FROM events e')).toEqual([
      { row: '(1,1,one)' },
    ])
    expect(
      await run(db, session, 'SELECT count(*)::int AS n FROM events TABLESAMPLE SYSTEM (100)'),
    ).toEqual([{ n: 1 }])
    expect(
      await run(db, session, 'SELECT count(*)::int AS n FROM events WHERE 1 / (id - 2) > -5'),
    ).toEqual([{ n: 1 }])
  })

  it('applies a filter on a partition two levels down, beside unfiltered siblings', async () => {
    const session = await makeSession(catalog, {
      policies: [
        policy('row_filter', { target: only(['events_2_high']), filterExpression: 'false' }),
      ],
    })
    expect(await run(db, session, 'SELECT id FROM events ORDER BY id')).toEqual([
      { id: 1 },
      { id: 2 },
    ])
    expect(await run(db, session, 'SELECT id FROM events WHERE id = 150')).toEqual([])
  })

  it("masks, denies and hides a child's rows through every ancestor", async () => {
    const session = await makeSession(catalog, {
      policies: [
        policy('column_mask', { target: only(['student'], ['name']), maskExpression: "'***'" }),
        policy('column_deny', { target: only(['grad'], ['ssn']) }),
      ],
    })
    expect(await run(db, session, 'SELECT id, name, ssn FROM person ORDER BY id')).toEqual([
      { id: 1, name: 'p', ssn: '111' },
      { id: 2, name: '***', ssn: '222' },
      { id: 3, name: '***', ssn: null },
    ])
    expect(
      await run(db, session, "SELECT count(*)::int AS n FROM person WHERE ssn = '333'"),
    ).toEqual([{ n: 0 }])
    const hidden = await makeSession(catalog, {
      policies: [policy('table_deny', { target: only(['student']) })],
    })
    expect(await run(db, hidden, 'SELECT id FROM person ORDER BY id')).toEqual([{ id: 1 }])
    expect((await runError(db, hidden, 'SELECT id FROM grad')).code).toBe('42P01')
  })

  it('keeps system columns and ONLY on a parent read in branches', async () => {
    const session = await makeSession(catalog, {
      policies: [policy('row_filter', { target: only(['grad']), filterExpression: 'false' })],
    })
    expect(
      await run(db, session, 'SELECT tableoid::regclass::text AS rel, id FROM person ORDER BY id'),
    ).toEqual([
      { rel: 'person', id: 1 },
      { rel: 'student', id: 2 },
    ])
    expect(await run(db, session, 'SELECT id FROM ONLY student')).toEqual([{ id: 2 }])
    expect(await run(db, session, 'SELECT p.id FROM person p, LATERAL (SELECT p.ctid) c')).toEqual([
      { id: 1 },
      { id: 2 },
    ])
  })
})

describe('a view over a function outside the allowlist', () => {
  it('says the function is not allowed instead of answering as missing', async () => {
    const session = await makeSession(catalog, {
      policies: [policy('row_filter', { target: only(['person']), filterExpression: 'true' })],
    })
    const error = await runError(db, session, 'SELECT * FROM v_twice')
    expect(error.code).toBe('42501')
    expect(error.message).toBe(
      'view "v_twice" calls a function that is not allowed through Palisade',
    )
  })
})
