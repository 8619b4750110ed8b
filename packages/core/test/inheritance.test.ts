import { PGlite } from '@electric-sql/pglite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Catalog } from '../src/catalog.types.js'
import { readCatalogWithViews } from './fixtures/pglite.js'
import { makeSession, policy, run, runError } from './fixtures/session.js'

/**
 * A parent's policies follow its rows into inheritance children and partitions: querying a
 * child directly is never a way around the parent's row filter, masks or denies.
 */
const SETUP = `
CREATE TABLE person (name text, tenant int, ssn text);
CREATE TABLE student (gpa float8) INHERITS (person);
CREATE TABLE grad (thesis text) INHERITS (student);
INSERT INTO person VALUES ('p1', 1, '111'), ('p2', 2, '222');
INSERT INTO student VALUES ('s1', 1, '333', 3.5), ('s2', 2, '444', 2.5), ('s3', 1, '555', 2.0);
INSERT INTO grad VALUES ('g1', 1, '666', 3.9, 'x'), ('g2', 2, '777', 3.1, 'y');
CREATE TABLE events (id int, tenant int, at date) PARTITION BY RANGE (at);
CREATE TABLE events_2026 PARTITION OF events FOR VALUES FROM ('2026-01-01') TO ('2027-01-01')
  PARTITION BY LIST (tenant);
CREATE TABLE events_2026_t1 PARTITION OF events_2026 FOR VALUES IN (1);
CREATE TABLE events_2026_t2 PARTITION OF events_2026 FOR VALUES IN (2);
INSERT INTO events VALUES (1, 1, '2026-03-01'), (2, 2, '2026-04-01'), (3, 1, '2026-05-01');
CREATE MATERIALIZED VIEW student_names AS SELECT name, tenant FROM student;
`

let db: PGlite
let catalog: Catalog
beforeAll(async () => {
  db = await PGlite.create()
  await db.exec(SETUP)
  catalog = await readCatalogWithViews(db, ['public'])
})
afterAll(() => db?.close())

const only = (tables: string[]) => ({ schemas: ['public'], tables })
const tenantFilter = (tables: string[]) =>
  policy('row_filter', { target: only(tables), filterExpression: 'tenant = {user.tenant}' })

describe("a parent's policies apply to its children and partitions", () => {
  it('knows each table’s ancestors, nearest first', () => {
    const table = (name: string) =>
      catalog.schemas[0]?.tables.find((t) => t.name === name)?.ancestors
    expect(table('grad')).toEqual([
      { schema: 'public', table: 'student' },
      { schema: 'public', table: 'person' },
    ])
    expect(table('events_2026_t1')).toEqual([
      { schema: 'public', table: 'events_2026' },
      { schema: 'public', table: 'events' },
    ])
    expect(table('person')).toBeUndefined()
  })

  it("filters a direct query of a child or a partition by the parent's row filter", async () => {
    const session = await makeSession(catalog, {
      user: { attributes: { tenant: 1 } },
      policies: [tenantFilter(['person', 'events'])],
    })
    expect(await run(db, session, 'SELECT name FROM student ORDER BY name')).toEqual([
      { name: 'g1' },
      { name: 's1' },
      { name: 's3' },
    ])
    expect(await run(db, session, 'SELECT name FROM ONLY grad')).toEqual([{ name: 'g1' }])
    expect(await run(db, session, 'SELECT id FROM events_2026_t2')).toEqual([])
    expect(await run(db, session, 'SELECT id FROM events_2026 ORDER BY id')).toEqual([
      { id: 1 },
      { id: 3 },
    ])
    expect(await run(db, session, 'SELECT count(*)::int AS n FROM person')).toEqual([{ n: 4 }])
  })

  it("adds the child's own policies to the parent's", async () => {
    const session = await makeSession(catalog, {
      user: { attributes: { tenant: 1 } },
      policies: [
        tenantFilter(['person']),
        policy('row_filter', { target: only(['student']), filterExpression: 'gpa >= 3' }),
      ],
    })
    expect(await run(db, session, 'SELECT name FROM student ORDER BY name')).toEqual([
      { name: 'g1' },
      { name: 's1' },
    ])
  })

  it("masks and denies the parent's columns in every child", async () => {
    const session = await makeSession(catalog, {
      policies: [
        policy('column_mask', {
          target: { ...only(['person']), columns: ['name'] },
          maskExpression: "'***'",
        }),
        policy('column_deny', { target: { ...only(['person']), columns: ['ssn'] } }),
      ],
    })
    expect(await run(db, session, 'SELECT DISTINCT name FROM grad')).toEqual([{ name: '***' }])
    expect((await runError(db, session, 'SELECT ssn FROM student')).code).toBe('42501')
    expect(Object.keys((await run(db, session, 'SELECT * FROM grad LIMIT 1'))[0] ?? {})).toEqual([
      'name',
      'tenant',
      'gpa',
      'thesis',
    ])
  })

  it("hides a materialized view over a child whose parent's policies it cannot apply", async () => {
    const session = await makeSession(catalog, {
      user: { attributes: { tenant: 1 } },
      policies: [tenantFilter(['person'])],
    })
    expect((await runError(db, session, 'SELECT * FROM student_names')).code).toBe('42P01')
    const open = await makeSession(catalog, { user: { attributes: { tenant: 1 } } })
    expect(await run(db, open, 'SELECT count(*)::int AS n FROM student_names')).toEqual([{ n: 5 }])
  })

  it('hides the children of a table denied as a whole', async () => {
    const session = await makeSession(catalog, {
      policies: [policy('table_deny', { target: only(['events']) })],
    })
    for (const table of ['events', 'events_2026', 'events_2026_t1']) {
      expect((await runError(db, session, `SELECT * FROM ${table}`)).code).toBe('42P01')
    }
  })
})
