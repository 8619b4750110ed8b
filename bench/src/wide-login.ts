/**
 * bench/wide-login: what a login costs on a wide datasource. For 100, 1,000 and 10,000 exposed
 * tables of 10 columns (`BENCH_WIDE_SIZES`, comma separated) in a scratch upstream database
 * (PALISADE_TEST_PG_URL), each with a tenant row filter and a mask (targets `wide.*`), beside a
 * one-table datasource with the same policies, against `palisade serve` with its embedded store:
 * login + first `SELECT 1` (the first after the catalog was saved, the median of warm ones, the
 * first after a policy change, after a tag on one table and after a sync that found a column
 * added upstream), another session's worst `SELECT 1` while 10 users log in
 * (right after a policy change), and the RSS of the process with those 10 sessions open.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { rssBytesOf } from './process-cpu.js'
import { PASSWORD } from './proxy-fixture.js'
import { serve, sleep } from './serve-process.js'
import { fmt, percentile, printTable } from './stats.js'
import { catalogSizes, createWideDatabase, seedWide, WIDE_USERS } from './wide-fixture.js'

const pgUrl = process.env['PALISADE_TEST_PG_URL']
const SIZES = catalogSizes('BENCH_WIDE_SIZES')
const WARM = 15
const USERS = WIDE_USERS

export async function run(): Promise<void> {
  if (!pgUrl) {
    console.log('wide-login: skipped (set PALISADE_TEST_PG_URL to a PostgreSQL server)')
    return
  }
  console.log(
    `Login + first SELECT 1 through \`palisade serve\` (embedded store), N tables × 10 columns, a row filter and a mask on each;\n"one table" is a datasource exposing one of them under the same policies.\n`,
  )
  const rows: string[][] = []
  for (const size of SIZES) rows.push(await measure(size))
  printTable(
    'Wide datasource logins',
    [
      'tables',
      'first login',
      'warm median',
      'one table, warm',
      'after a policy change',
      'after a tag',
      'after a sync (a column added)',
      'worst other SELECT 1 (10 logins)',
      'RSS, 10 sessions',
      'RSS after the sync',
    ],
    rows,
  )
}

async function measure(size: number): Promise<string[]> {
  const db = await createWideDatabase(pgUrl as string, size)
  const dataDir = mkdtempSync(join(tmpdir(), 'palisade-wide-'))
  const s = await serve(dataDir)
  try {
    const setup = await seedWide(s, db.config, size)
    const connect = (user: string, database: string) =>
      loginAndSelect(s.dataPort, user, database).then((c) => c.end().then(() => c.ms))
    const first = await connect('user0', 'wide')
    const warm: number[] = []
    for (let i = 0; i < WARM; i++) warm.push(await connect(`user${i % USERS}`, 'wide'))
    await connect('user0', 'one')
    const oneWarm: number[] = []
    for (let i = 0; i < WARM; i++) oneWarm.push(await connect(`user${i % USERS}`, 'one'))
    await setup.changePolicy(1)
    await sleep(100)
    const afterChange = await connect('user0', 'wide')
    // Another session's SELECT 1, back to back, while 10 users log in after a change.
    const probe = await loginAndSelect(s.dataPort, 'probe', 'wide')
    await setup.changePolicy(2)
    await sleep(100)
    const samples: number[] = []
    let done = false
    const probing = (async () => {
      while (!done) {
        const started = performance.now()
        await probe.client.query('SELECT 1')
        samples.push(performance.now() - started)
      }
    })()
    const sessions = await Promise.all(
      Array.from({ length: USERS }, (_, i) => loginAndSelect(s.dataPort, `user${i}`, 'wide')),
    )
    await sleep(200)
    done = true
    await probing
    await sleep(1000)
    const rss = rssBytesOf(s.child.pid as number, 0)
    await Promise.all([...sessions, probe].map((c) => c.end()))
    // Catalog changes: a tag on one table, then a sync that finds a column added upstream.
    await setup.tagTable('t00002', 'bench.tagged')
    await sleep(100)
    const afterTag = await connect('user1', 'wide')
    await db.addColumn('t00003', 'added_later')
    await setup.syncWide()
    await sleep(100)
    const afterSync = await connect('user2', 'wide')
    const rssAfterSync = rssBytesOf(s.child.pid as number, 0)
    samples.sort((a, b) => a - b)
    const ms = (v: number) => `${fmt(v, 1)} ms`
    return [
      size.toLocaleString('en-US'),
      ms(first),
      ms(median(warm)),
      ms(median(oneWarm)),
      ms(afterChange),
      ms(afterTag),
      ms(afterSync),
      ms(samples.at(-1) ?? Number.NaN),
      `${fmt(rss / 1024 / 1024, 0)} MB`,
      `${fmt(rssAfterSync / 1024 / 1024, 0)} MB`,
    ]
  } finally {
    await s.stop()
    rmSync(dataDir, { recursive: true, force: true })
    await db.drop()
  }
}

const median = (values: number[]) =>
  percentile(
    [...values].sort((a, b) => a - b),
    50,
  )

interface Session {
  client: pg.Client
  ms: number
  end(): Promise<void>
}

/** Connects and runs `SELECT 1`; `ms` is the time from connect to its answer. */
async function loginAndSelect(port: number, user: string, database: string): Promise<Session> {
  const started = performance.now()
  const client = new pg.Client({ host: '127.0.0.1', port, user, password: PASSWORD, database })
  client.on('error', (error) => console.error(`wide-login: ${user} failed: ${error.message}`))
  await client.connect()
  await client.query('SELECT 1')
  return { client, ms: performance.now() - started, end: () => client.end().catch(() => {}) }
}
