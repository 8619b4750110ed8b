/**
 * Column lists of the `pg_catalog` relations whose virtual form replaces some columns, per
 * upstream major version. A derived table must name every column to replace one, and these
 * catalogs gained and renamed columns between releases; the lists keep `SELECT *` on the
 * virtual relation identical in shape to the real one. Tests compare them with the running
 * upstream (PostgreSQL 15 and PGlite's PostgreSQL 18).
 */
const PG_CLASS_15 = `oid relname relnamespace reltype reloftype relowner relam relfilenode
  reltablespace relpages reltuples relallvisible reltoastrelid relhasindex relisshared
  relpersistence relkind relnatts relchecks relhasrules relhastriggers relhassubclass
  relrowsecurity relforcerowsecurity relispopulated relreplident relispartition relrewrite
  relfrozenxid relminmxid relacl reloptions relpartbound`

const PG_CLASS_18 = PG_CLASS_15.replace('relallvisible', 'relallvisible relallfrozen')

const PG_DATABASE_15 = `oid datname datdba encoding datlocprovider datistemplate datallowconn
  datconnlimit datfrozenxid datminmxid dattablespace datcollate datctype daticulocale
  datcollversion datacl`

const PG_DATABASE_16 = PG_DATABASE_15.replace('daticulocale', 'daticulocale daticurules')

const PG_DATABASE_17 = PG_DATABASE_16.replace(
  'datallowconn',
  'datallowconn dathasloginevt',
).replace('daticulocale', 'datlocale')

/** The upstream version assumed when none is known (the oldest supported release). */
export const DEFAULT_SERVER_VERSION = 150000

/** `[first version, columns]`, newest first: a version uses the first entry at or below it. */
const COLUMN_LISTS = {
  pg_class: [
    [180000, PG_CLASS_18],
    [0, PG_CLASS_15],
  ],
  pg_database: [
    [170000, PG_DATABASE_17],
    [160000, PG_DATABASE_16],
    [0, PG_DATABASE_15],
  ],
} as const satisfies Record<string, readonly (readonly [number, string])[]>

export type VersionedCatalogRelation = keyof typeof COLUMN_LISTS

/** The relation's columns, in order, on an upstream of `serverVersion` (server_version_num). */
export function catalogColumns(
  relation: VersionedCatalogRelation,
  serverVersion: number,
): readonly string[] {
  const lists: readonly (readonly [number, string])[] = COLUMN_LISTS[relation]
  const list = lists.find(([since]) => serverVersion >= since) ?? lists[lists.length - 1]
  return (list?.[1] ?? '').split(/\s+/).filter((c) => c.length > 0)
}
