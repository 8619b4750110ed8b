/**
 * bench/catalog-browsing: what browsing a wide catalog costs through `palisade serve` (its own
 * process, embedded store) beside the same upstream directly. One schema `wide` of N tables of 10
 * columns (`BENCH_BROWSE_TABLES` or `BENCH_CATALOG_TABLES`, comma separated, default 100, 1,000
 * and 10,000), every table exposed with a tenant row filter and
 * a mask, browsed as a user of the `wide` datasource:
 *
 * - psql `\dt wide.*`, `\d` of the middle table (`wide.t05000` of 10,000), `\dn`: the statements
 *   psql sends for them (read from
 *   `psql -E` against the upstream), timed one after the other on one connection;
 * - `information_schema.columns` of the schema, every row;
 * - pgjdbc `DatabaseMetaData` and SQLAlchemy reflection (bench/clients), when java and the
 *   Debian python3 with SQLAlchemy are installed.
 *
 * Every figure is the fastest of three on an open session; the goal is 2× direct + 250 ms. Then
 * another session's worst `SELECT 1` while a new session runs `\d` (goal 50 ms).
 */
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import pg from 'pg'
import { PASSWORD } from './proxy-fixture.js'
import { serve } from './serve-process.js'
import { fmt, printTable } from './stats.js'
import { catalogSizes, createWideDatabase, seedWide } from './wide-fixture.js'

const exec = promisify(execFile)
const pgUrl = process.env['PALISADE_TEST_PG_URL']
const SIZES = catalogSizes('BENCH_BROWSE_TABLES')
const CLIENTS = new URL('../clients/', import.meta.url).pathname
const JDBC_JAR = process.env['PALISADE_COMPAT_JDBC_JAR'] ?? '/usr/share/java/postgresql.jar'
/** The table `\d` and the single-table client calls describe: the middle one. */
const middleOf = (tables: number) => `t${String(Math.ceil(tables / 2)).padStart(5, '0')}`

interface Target {
  host: string
  port: number
  database: string
  user: string
  password?: string
}

export async function run(): Promise<void> {
  if (!pgUrl) {
    console.log('catalog-browsing: skipped (set PALISADE_TEST_PG_URL to a PostgreSQL server)')
    return
  }
  for (const tables of SIZES) await browse(pgUrl, tables)
}

/** Every call of the table at one catalog size, then its table. */
async function browse(url: string, tables: number): Promise<void> {
  const table = middleOf(tables)
  const db = await createWideDatabase(url, tables)
  const dataDir = mkdtempSync(join(tmpdir(), 'palisade-browse-'))
  const s = await serve(dataDir)
  try {
    await seedWide(s, db.config, tables)
    const { host, port, database, user } = db.config
    const password = typeof db.config.password === 'string' ? db.config.password : ''
    const direct: Target = { host, port, database, user, password }
    const palisade: Target = {
      host: '127.0.0.1',
      port: s.dataPort,
      database: 'wide',
      user: 'user0',
      password: PASSWORD,
    }
    const rows: string[][] = []
    const add = (what: string, d: number, p: number) => {
      console.log(`  ${what}: ${fmt(d, 1)} ms direct, ${fmt(p, 1)} ms through Palisade`)
      rows.push([
        what,
        `${fmt(d, 1)} ms`,
        `${fmt(p, 1)} ms`,
        `${fmt(p / d, 2)}×`,
        p <= 2 * d + 250 ? 'met' : `**not met** (${fmt(2 * d + 250, 0)} ms)`,
      ])
    }
    for (const command of ['\\dt wide.*', `\\d wide.${table}`, '\\dn']) {
      const statements = await psqlStatements(direct, command)
      add(
        `psql \`${command}\``,
        await timeAll(direct, statements),
        await timeAll(palisade, statements),
      )
    }
    const columns = [
      `SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns
        WHERE table_schema = 'wide' ORDER BY table_name, ordinal_position`,
    ]
    add(
      'information_schema.columns (schema)',
      await timeAll(direct, columns),
      await timeAll(palisade, columns),
    )
    for (const [what, d, p] of await clientCalls(direct, palisade, table)) add(what, d, p)
    // Item 1's bound: a session's first catalog statements (its lists are built then) must not
    // hold other sessions' statements for more than 50 ms.
    const describe = await psqlStatements(direct, `\\d wide.${table}`)
    const fresh = { ...palisade, user: 'user1' }
    const worst = await worstOther({ ...palisade, user: 'probe' }, () => timeAll(fresh, describe))
    console.log(
      `  another session's worst SELECT 1 while a new session runs \\d: ${fmt(worst, 1)} ms (goal 50 ms: ${worst <= 50 ? 'met' : '**not met**'})`,
    )
    printTable(
      `Catalog browsing, ${tables.toLocaleString('en-US')} tables × 10 columns (fastest of 3, open session)`,
      ['what', 'direct', 'through Palisade', 'ratio', 'goal 2× direct + 250 ms'],
      rows,
    )
  } finally {
    await s.stop()
    rmSync(dataDir, { recursive: true, force: true })
    await db.drop()
  }
}

/** The statements psql sends for a backslash command, as `psql -E` echoes them. */
async function psqlStatements(target: Target, command: string): Promise<string[]> {
  const { stdout } = await exec(
    'psql',
    [
      '-X',
      '-E',
      '-h',
      target.host,
      '-p',
      String(target.port),
      '-U',
      target.user,
      '-d',
      target.database,
      '-c',
      command,
    ],
    { env: { ...process.env, PGPASSWORD: target.password ?? '' }, maxBuffer: 64 << 20 },
  )
  const found = [...stdout.matchAll(/\*+ QUERY \*+\n([\s\S]*?)\n\*{10,}/g)]
  return found.map((m) => (m[1] as string).trim())
}

/** Another session's worst `SELECT 1`, sent back to back while `work` runs, in ms. */
async function worstOther(target: Target, work: () => Promise<unknown>): Promise<number> {
  const client = new pg.Client({ ...target, password: target.password ?? '' })
  await client.connect()
  let done = false
  let worst = 0
  const probe = (async () => {
    while (!done) {
      const started = performance.now()
      await client.query('SELECT 1')
      worst = Math.max(worst, performance.now() - started)
    }
  })()
  try {
    await work()
  } finally {
    done = true
    await probe
    await client.end()
  }
  return worst
}

/** The fastest of three runs of `statements`, one after the other on one session, in ms. */
async function timeAll(target: Target, statements: string[]): Promise<number> {
  const client = new pg.Client({ ...target, password: target.password ?? '' })
  await client.connect()
  try {
    let best = Number.POSITIVE_INFINITY
    for (let i = 0; i < 3; i++) {
      const started = performance.now()
      for (const sql of statements) await client.query(sql)
      best = Math.min(best, performance.now() - started)
    }
    return best
  } finally {
    await client.end()
  }
}

/** pgjdbc and SQLAlchemy calls, each as [what, direct ms, Palisade ms]; skipped when absent. */
async function clientCalls(
  direct: Target,
  palisade: Target,
  table: string,
): Promise<[string, number, number][]> {
  const calls: [string, number, number][] = []
  const jdbc = (t: Target) =>
    exec(
      'java',
      [
        '-cp',
        JDBC_JAR,
        join(CLIENTS, 'CatalogBrowse.java'),
        t.host,
        String(t.port),
        t.database,
        t.user,
        t.password ?? '',
        table,
      ],
      { maxBuffer: 16 << 20, timeout: 120_000 },
    )
  const python = (t: Target) =>
    exec(
      '/usr/bin/python3',
      [
        join(CLIENTS, 'catalog_browse.py'),
        `postgresql+psycopg2://${t.user}:${encodeURIComponent(t.password ?? '')}@${t.host}:${t.port}/${t.database}`,
        table,
      ],
      { maxBuffer: 16 << 20, timeout: 120_000 },
    )
  for (const [name, client] of [
    ['pgjdbc', jdbc],
    ['SQLAlchemy', python],
  ] as const) {
    try {
      const d = parseTimings((await client(direct)).stdout)
      const p = parseTimings((await client(palisade)).stdout)
      for (const [call, ms] of d) calls.push([`${name} ${call}`, ms, p.get(call) ?? Number.NaN])
    } catch (error) {
      const stderr = String((error as { stderr?: unknown }).stderr ?? '').trim()
      const why = stderr.split('\n').find((line) => /Exception|Error/.test(line))
      console.log(`catalog-browsing: ${name} failed: ${why ?? (error as Error).message}`)
    }
  }
  return calls
}

/** Lines `<name> <ms> <count>` → name → ms. */
function parseTimings(stdout: string): Map<string, number> {
  const timings = new Map<string, number>()
  for (const line of stdout.trim().split('\n')) {
    const parts = line.trim().split(' ')
    if (parts.length >= 3) timings.set(parts.slice(0, -2).join(' '), Number(parts.at(-2)))
  }
  return timings
}
