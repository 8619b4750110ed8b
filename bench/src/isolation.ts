/**
 * bench/isolation: one session's costly statement must not stall the others. For each attack, an
 * attacker session sends it over and over while a probe session sends `SELECT 1` back to back;
 * the table gives the probe's latency percentiles beside the attack's own time and answer, and
 * (PostgreSQL only) the time and answer of the same statement sent directly, without policies.
 * Upstream: PostgreSQL when PALISADE_TEST_PG_URL is set (a scratch database), else an embedded
 * PGlite, which runs in the proxy's own process and so stalls it while it executes a statement.
 */
import pg from 'pg'
import { startProxyProcess } from './proxy-child.js'
import { PASSWORD } from './proxy-fixture.js'
import { createScratchDatabase } from './scratch-database.js'
import { fmt, percentile, printTable } from './stats.js'

const pgUrl = process.env['PALISADE_TEST_PG_URL']
/** How long each attack is repeated while the probe runs. */
const DURATION_MS = Number(process.env['BENCH_ISOLATION_MS'] ?? 3000)

/** How long the direct run of an attack may take before PostgreSQL cancels it. */
const DIRECT_BUDGET_MS = 20_000

const list = (n: number, item: (i: number) => string, separator: string) =>
  Array.from({ length: n }, (_, i) => item(i)).join(separator)

interface Attack {
  readonly name: string
  readonly sql: string
  /** Sent with the extended protocol (one parameter) instead of the simple one. */
  readonly extended?: boolean
}

const attacks: Attack[] = [
  {
    name: 'AND of 100,000 conjuncts (over the size limit)',
    sql: `SELECT count(*) FROM orders WHERE ${list(100_000, () => 'id > 0', ' AND ')}`,
  },
  {
    name: 'AND of 20,000 conjuncts',
    sql: `SELECT count(*) FROM orders WHERE ${list(20_000, () => 'id > 0', ' AND ')}`,
  },
  {
    name: 'AND of 20,000 conjuncts, extended',
    sql: `SELECT count(*) FROM orders WHERE id > $1 AND ${list(20_000, () => 'id > 0', ' AND ')}`,
    extended: true,
  },
  {
    name: 'OR of 30,000 disjuncts',
    sql: `SELECT count(*) FROM orders WHERE ${list(30_000, () => 'id < 0', ' OR ')}`,
  },
  {
    name: 'IN list of 200,000 values (over the size limit)',
    sql: `SELECT count(*) FROM orders WHERE id IN (${list(200_000, (i) => String(i), ',')})`,
  },
  {
    name: 'IN list of 120,000 values',
    sql: `SELECT count(*) FROM orders WHERE id IN (${list(120_000, (i) => String(i), ',')})`,
  },
  {
    name: 'nested scalar subqueries, 3,000 deep',
    sql: `SELECT ${'(SELECT '.repeat(3000)}1${')'.repeat(3000)} FROM orders`,
  },
  {
    name: 'IN list of 10,000 values',
    sql: `SELECT count(*) FROM orders WHERE id IN (${list(10_000, (i) => String(i), ',')})`,
  },
  {
    name: '1,600-column select',
    sql: `SELECT ${list(1600, (i) => `id + ${i} AS c${i}`, ', ')} FROM orders LIMIT 1`,
  },
  {
    name: '500-branch CASE',
    sql: `SELECT sum(CASE ${list(500, (i) => `WHEN id = ${i} THEN ${i}`, ' ')} END) FROM orders`,
  },
]

interface Outcome {
  readonly times: number[]
  readonly answer: string
}

async function repeat(client: pg.Client, attack: Attack, until: number): Promise<Outcome> {
  const times: number[] = []
  let answer = ''
  do {
    const started = performance.now()
    try {
      const result = attack.extended
        ? await client.query({ text: attack.sql, values: [0] })
        : await client.query(attack.sql)
      answer = `ok, ${result.rowCount} row(s)`
    } catch (error) {
      const { code, message } = error as { code?: string; message: string }
      answer = `${code ?? 'error'} ${message.slice(0, 60)}`
    }
    times.push(performance.now() - started)
  } while (performance.now() < until)
  return { times, answer }
}

/** The attack's time and answer directly on the upstream, once (PostgreSQL only). */
async function direct(client: pg.Client | undefined, attack: Attack): Promise<string> {
  if (!client) return ''
  const { times, answer } = await repeat(client, attack, 0)
  return `${fmt(times[0] ?? Number.NaN, 0)} ms, ${answer}`
}

async function probe(client: pg.Client, done: () => boolean): Promise<number[]> {
  const samples: number[] = []
  while (!done()) {
    const started = performance.now()
    await client.query('SELECT 1')
    samples.push(performance.now() - started)
  }
  return samples
}

export async function run(): Promise<void> {
  const scratch = pgUrl ? await createScratchDatabase(pgUrl) : undefined
  const plane = await startProxyProcess(scratch?.upstream ?? { kind: 'pglite' })
  const connect = async () => {
    const client = new pg.Client({
      host: '127.0.0.1',
      port: plane.port,
      user: 'alice',
      password: PASSWORD,
      database: 'bench',
    })
    await client.connect()
    return client
  }
  const [attacker, prober] = await Promise.all([connect(), connect()])
  // PostgreSQL's own time for some attacks grows superlinearly: the direct run has a budget.
  const upstream = scratch
    ? new pg.Client({ ...scratch.direct, statement_timeout: DIRECT_BUDGET_MS })
    : undefined
  await upstream?.connect()
  console.log(
    `upstream: ${scratch ? 'PostgreSQL' : 'PGlite, in the proxy process (its execution time stalls the probe)'}; ` +
      `each attack repeated for ${DURATION_MS} ms while another session sends SELECT 1\n`,
  )
  const rows: string[][] = []
  try {
    const baselineEnd = performance.now() + Math.min(DURATION_MS, 1000)
    const baseline = (await probe(prober, () => performance.now() > baselineEnd)).sort(
      (a, b) => a - b,
    )
    rows.push(['(no attack)', '', '', '', '', ...latencies(baseline)])
    for (const attack of attacks) {
      const until = performance.now() + DURATION_MS
      let attacking = true
      const [outcome, samples] = await Promise.all([
        repeat(attacker, attack, until).finally(() => {
          attacking = false
        }),
        probe(prober, () => !attacking),
      ])
      const times = outcome.times.sort((a, b) => a - b)
      rows.push([
        attack.name,
        `${fmt(Buffer.byteLength(attack.sql) / 1024, 0)} KB`,
        `${fmt(percentile(times, 50), 0)} ms × ${times.length}`,
        outcome.answer,
        await direct(upstream, attack),
        ...latencies(samples.sort((a, b) => a - b)),
      ])
    }
    printTable(
      'Probe latency while another session attacks',
      [
        'attack',
        'size',
        'attack time (median)',
        'answer',
        'directly on the upstream',
        'probe p50',
        'p99',
        'max',
        'probes',
      ],
      rows,
    )
  } finally {
    await Promise.all([attacker, prober, upstream].map((c) => c?.end().catch(() => {})))
    await plane.stop()
    await scratch?.drop()
  }
}

function latencies(sorted: number[]): string[] {
  return [
    `${fmt(percentile(sorted, 50), 2)} ms`,
    `${fmt(percentile(sorted, 99), 2)} ms`,
    `${fmt(sorted.at(-1) ?? Number.NaN, 1)} ms`,
    String(sorted.length),
  ]
}
