/**
 * bench/pgbench: the data plane measured the way the field measures a PostgreSQL proxy. pgbench
 * runs a point query and a two-table join, in simple, extended and prepared protocol, at 1 and 8
 * clients, plus connect-per-transaction (`-C`), against eight targets taking turns in one run:
 *
 * - direct PostgreSQL, the policy written into the query by hand (trust auth);
 * - pgbouncer 1.18 in session mode with SCRAM logins, the same hand-written query;
 * - a bare Node.js relay (node-relay-process.ts), the same query: the floor of any proxy on
 *   this runtime, what Node's sockets cost before a message is read;
 * - native row-level security plus a masking view (what a team would build instead), directly;
 * - Palisade as a user with a row filter and a mask (SCRAM): Palisade adds both; in the bench's
 *   own process with the sessions in memory and no audit (what the data plane costs);
 * - `palisade serve` as deployed, the same user and policies made through the admin API: its
 *   embedded store, the query audit row of every statement and its metrics included;
 * - the same `palisade serve` build with every audit row built, then discarded
 *   (PALISADE_BENCH_DISCARD_QUERY_AUDIT): beside the previous one, what the audit costs, also on
 *   the serving thread alone (its CPU time from /proc), at full speed and, for 8 clients, with
 *   both at one fixed rate (pgbench -R);
 * - Palisade as a user without policies.
 *
 * Needs PALISADE_TEST_PG_URL and pgbench; pgbouncer when installed. Literals differ per query
 * (pgbench's `\set id random(…)`), as psql, psycopg2 and BI tools send them in simple protocol.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { type PgbenchResult, runPgbench } from './pgbench-runner.js'
import { startPgbouncer } from './pgbouncer.js'
import { startProxyProcess } from './proxy-child.js'
import { PASSWORD } from './proxy-fixture.js'
import { createScratchDatabase } from './scratch-database.js'
import { type Serve, seed, serve } from './serve-process.js'
import { fmt, printTable } from './stats.js'

const pgUrl = process.env['PALISADE_TEST_PG_URL']
const SECONDS = Number(process.env['BENCH_PGBENCH_SECONDS'] ?? 5)
/** Every target runs every cell this many times, in turns; the table gives the median. */
const ROUNDS = Number(process.env['BENCH_PGBENCH_ROUNDS'] ?? 3)
/** Runs only the cells whose label ("point simple 8", "connect") matches. */
const FILTER = new RegExp(process.env['BENCH_PGBENCH_FILTER'] ?? '')
/** Seconds of one unmeasured run per target before the first cell (0: none). */
const WARMUP = Number(process.env['BENCH_PGBENCH_WARMUP'] ?? 3)

/** The query as each kind of target sends it; `:id` is pgbench's random key. */
interface Workload {
  name: string
  /** Key range of `:id`. */
  keys: number
  /** Through Palisade: the policies are added by the proxy. */
  plain: string
  /** Directly and through pgbouncer: the row filter and the mask written by hand. */
  handWritten: string
  /** Native row-level security does the filter; a security-invoker view does the mask. */
  nativeRls: string
}

const workloads: Workload[] = [
  {
    name: 'point',
    keys: 1000,
    plain: 'SELECT id, name, email FROM customers WHERE id = :id',
    handWritten:
      "SELECT id, name, '***'::text AS email FROM customers WHERE id = :id AND tenant = 3",
    nativeRls: 'SELECT id, name, email FROM customers_masked WHERE id = :id',
  },
  {
    name: 'join',
    keys: 10000,
    plain:
      'SELECT o.id, o.amount, c.name, c.email FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.id = :id',
    handWritten:
      "SELECT o.id, o.amount, c.name, '***'::text AS email FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.id = :id AND o.tenant = 3 AND c.tenant = 3",
    nativeRls:
      'SELECT o.id, o.amount, c.name, c.email FROM orders o JOIN customers_masked c ON c.id = o.customer_id WHERE o.id = :id',
  },
]

interface Cell {
  label: string
  workload: Workload
  mode: string
  clients: number
  connect: boolean
}

function cells(): Cell[] {
  const out: Cell[] = []
  for (const workload of workloads)
    for (const mode of ['simple', 'extended', 'prepared'])
      for (const clients of [1, 8])
        out.push({
          label: `${workload.name} ${mode} ${clients}`,
          workload,
          mode,
          clients,
          connect: false,
        })
  out.push({
    label: 'point simple 8 connect',
    workload: workloads[0] as Workload,
    mode: 'simple',
    clients: 8,
    connect: true,
  })
  return out.filter((c) => FILTER.test(c.label))
}

/** A role under row-level security and a masking view: the native alternative. */
async function createNativeRls(direct: pg.ClientConfig, role: string): Promise<void> {
  const client = new pg.Client(direct)
  await client.connect()
  await client.query(`
    CREATE ROLE ${role} LOGIN;
    ALTER TABLE customers ENABLE ROW LEVEL SECURITY;
    ALTER TABLE orders ENABLE ROW LEVEL SECURITY;
    CREATE POLICY tenant ON customers USING (tenant = 3);
    CREATE POLICY tenant ON orders USING (tenant = 3);
    CREATE VIEW customers_masked WITH (security_invoker = true) AS
      SELECT id, tenant, name, '***'::text AS email FROM customers;
    GRANT SELECT ON customers, orders, customers_masked TO ${role};
  `)
  await client.end()
}

interface Target {
  name: string
  port: number
  user: string
  database: string
  script: (w: Workload) => string
  password?: string
  /** CPU time so far in µs: the relaying process and, for `palisade serve`, its serving thread. */
  cpu?: () => Promise<{ process: number; servingThread?: number }>
}

const SERVED = 'palisade serve'
const DISCARDED = 'palisade serve, audit discarded'
/** The CPU columns: the C relay, the bare Node.js relay (the floor on this runtime), Palisade's. */
const CPU_COLUMNS = ['pgbouncer', 'Node relay', 'Palisade', SERVED, DISCARDED]

/** `+12 µs` or `-5 µs`: time added to (or taken from) a transaction. */
const signedMicros = (micros: number) => `${micros >= 0 ? '+' : '-'}${fmt(Math.abs(micros), 0)} µs`

const median = (values: number[]) => {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b)
  if (sorted.length === 0) return Number.NaN
  const mid = sorted.length / 2
  return Number.isInteger(mid)
    ? ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2
    : (sorted[Math.floor(mid)] as number)
}

/** Appends `value` to the list of `key`. */
const append = <T>(map: Map<string, T[]>, key: string, value: T) =>
  map.set(key, [...(map.get(key) ?? []), value])

/**
 * Targets in the order of `round`, reversed every other round: on a shared machine the speed
 * drifts over a cell's seconds, and `palisade serve` and its audit-discarded twin run next to
 * each other.
 */
const inTurns = <T>(targets: T[], round: number) =>
  round % 2 === 0 ? targets : [...targets].reverse()

/** pgbench against `target` for `cell`: SECONDS as fast as it answers, unless told otherwise. */
function runTarget(target: Target, cell: Cell, options: { seconds?: number; rate?: number } = {}) {
  return runPgbench({
    port: target.port,
    user: target.user,
    database: target.database,
    script: target.script(cell.workload),
    clients: cell.clients,
    mode: cell.mode,
    seconds: options.seconds ?? SECONDS,
    connectPerTransaction: cell.connect,
    ...(options.rate ? { rate: options.rate } : {}),
    ...(target.password ? { password: target.password } : {}),
  })
}

/**
 * One run with the target's CPU µs per transaction over it (from /proc): the whole process and,
 * for `palisade serve`, its serving thread; undefined where the run failed or nothing is measured.
 */
async function measuredRun(target: Target, cell: Cell, options: { rate?: number } = {}) {
  const before = await target.cpu?.()
  const result = await runTarget(target, cell, options)
  const after = await target.cpu?.()
  const perTransaction = (from: number | undefined, to: number | undefined) =>
    result.ok && from !== undefined && to !== undefined
      ? (to - from) / result.transactions
      : undefined
  return {
    result,
    process: perTransaction(before?.process, after?.process),
    servingThread: perTransaction(before?.servingThread, after?.servingThread),
  }
}

/**
 * The fixed rate for the serving thread's audit cost, as a share of the slower twin's tps: at
 * full speed each process's CPU per statement follows its own throughput (fewer statements per
 * wake-up, per socket write), so the difference of two saturated runs mixes the audit's cost
 * with the throughput it loses; at one rate both do the same work per second.
 */
const FIXED_RATE_SHARE = 0.7

/**
 * `palisade serve` and its audit-discarded twin at one fixed rate, in turns (8-client cells,
 * not `-C`): the serving thread's CPU µs per statement of each, medians of ROUNDS runs.
 */
async function servingThreadAtFixedRate(cell: Cell, twins: Target[], rate: number) {
  if (cell.clients === 1 || cell.connect || twins.length !== 2 || !Number.isFinite(rate)) {
    return undefined
  }
  const spent = new Map<string, number[]>()
  for (let round = 0; round < ROUNDS; round++) {
    for (const target of inTurns(twins, round)) {
      const { servingThread } = await measuredRun(target, cell, { rate })
      if (servingThread !== undefined) append(spent, target.name, servingThread)
    }
  }
  return {
    rate,
    served: median(spent.get(SERVED) ?? []),
    discarded: median(spent.get(DISCARDED) ?? []),
  }
}

export async function run(): Promise<void> {
  if (!pgUrl) {
    console.log('bench/pgbench needs PALISADE_TEST_PG_URL (a PostgreSQL server); skipped.\n')
    return
  }
  const scratch = await createScratchDatabase(pgUrl)
  const rlsRole = `palisade_bench_rls_${process.pid}`
  const dir = mkdtempSync(join(tmpdir(), 'palisade-bench-pgbench-'))
  const scriptFile = (w: Workload, kind: keyof Workload) => {
    const file = join(dir, `${w.name}-${kind}.sql`)
    writeFileSync(file, `\\set id random(1, ${w.keys})\n${w[kind]};\n`)
    return file
  }
  const upstream = scratch.upstream
  const superuser = String(upstream['user'])
  const proxy = await startProxyProcess(upstream)
  const relay = await startProxyProcess(upstream, 'node-relay-process.ts')
  // As deployed: the CLI with its embedded store, writing every statement's audit row; and the
  // same build, configured the same, dropping each row at the hand-off to the store.
  const serveDirs: string[] = []
  const startServe = async (discardAudit: boolean) => {
    const serveDir = mkdtempSync(join(tmpdir(), 'palisade-bench-serve-'))
    serveDirs.push(serveDir)
    const served = await serve(serveDir, undefined, { discardAudit })
    await seed(served, scratch, { tables: ['customers', 'orders'], maskEmail: true, poolSize: 20 })
    return served
  }
  const audited = await startServe(false)
  const discarded = await startServe(true)
  const bouncer = await startPgbouncer(
    {
      host: String(upstream['host']),
      port: Number(upstream['port']),
      database: scratch.name,
      user: superuser,
    },
    { mode: 'session', size: 20, scramPassword: PASSWORD },
  )
  try {
    await createNativeRls(scratch.direct, rlsRole)
    const pgPort = Number(upstream['port'])
    const servedTarget = (name: string, s: Serve): Target => ({
      name,
      port: s.dataPort,
      user: 'bench',
      database: 'bench',
      script: (w) => scriptFile(w, 'plain'),
      password: PASSWORD,
      cpu: async () => s.cpuMicros(),
    })
    const targets: Target[] = [
      {
        name: 'direct',
        port: pgPort,
        user: superuser,
        database: scratch.name,
        script: (w) => scriptFile(w, 'handWritten'),
      },
      ...(bouncer
        ? [
            {
              name: 'pgbouncer',
              port: bouncer.port,
              user: superuser,
              database: scratch.name,
              script: (w: Workload) => scriptFile(w, 'handWritten'),
              password: PASSWORD,
              cpu: async () => ({ process: bouncer.cpuMicros() }),
            },
          ]
        : []),
      {
        name: 'Node relay',
        port: relay.port,
        user: superuser,
        database: scratch.name,
        script: (w) => scriptFile(w, 'handWritten'),
        cpu: async () => ({ process: await relay.cpuMicros() }),
      },
      {
        name: 'native RLS',
        port: pgPort,
        user: rlsRole,
        database: scratch.name,
        script: (w) => scriptFile(w, 'nativeRls'),
      },
      {
        name: 'Palisade',
        port: proxy.port,
        user: 'alice',
        database: 'bench',
        script: (w) => scriptFile(w, 'plain'),
        password: PASSWORD,
        cpu: async () => ({ process: await proxy.cpuMicros() }),
      },
      servedTarget(SERVED, audited),
      servedTarget(DISCARDED, discarded),
      {
        name: 'Palisade, no policy',
        port: proxy.port,
        user: 'plain',
        database: 'bench',
        script: (w) => scriptFile(w, 'plain'),
        password: PASSWORD,
        cpu: async () => ({ process: await proxy.cpuMicros() }),
      },
    ]
    /** The relays whose CPU time per transaction is printed, as far as they run. */
    const measured = (name: string) => targets.some((t) => t.name === name)
    const throughput: string[][] = []
    const cpuRows: string[][] = []
    const latency: string[][] = []
    // One unmeasured run per target first: JIT compilation and the embedded store's WebAssembly
    // tier-up (the code of its batch INSERT) finish before the measured rounds, as in a proxy
    // that has been up for more than a few seconds.
    const first = cells()[0]
    if (first && WARMUP > 0) {
      for (const target of targets) await runTarget(target, first, { seconds: WARMUP })
    }
    for (const cell of cells()) {
      const results = new Map<string, PgbenchResult[]>()
      // Per run: CPU µs per transaction of the process, and of `palisade serve`'s serving thread.
      const cpu = new Map<string, number[]>()
      const thread = new Map<string, number[]>()
      for (let round = 0; round < ROUNDS; round++) {
        for (const target of inTurns(targets, round)) {
          const run = await measuredRun(target, cell)
          append(results, target.name, run.result)
          if (run.process !== undefined) append(cpu, target.name, run.process)
          if (run.servingThread !== undefined) append(thread, target.name, run.servingThread)
        }
      }
      const tps = (name: string) =>
        median((results.get(name) ?? []).map((r) => (r.ok ? r.tps : Number.NaN)))
      const fixed = await servingThreadAtFixedRate(
        cell,
        targets.filter((t) => t.name === SERVED || t.name === DISCARDED),
        FIXED_RATE_SHARE * Math.min(tps(SERVED), tps(DISCARDED)),
      )
      const failure = (name: string) => (results.get(name) ?? []).find((r) => !r.ok)?.note
      const direct = tps('direct')
      const cellOf = (name: string) => {
        const failed = failure(name)
        if (failed !== undefined) return `failed: ${failed}`
        const value = tps(name)
        return `${fmt(value, 0)} (${fmt(value / direct, 2)}×)`
      }
      const label = `${cell.workload.name}, ${cell.connect ? '-C ' : ''}${cell.mode}`
      // The median of each round's ratio: a round's two runs are neighbours in time.
      const ratio = (a: string, b: string) => {
        const [mine, theirs] = [results.get(a) ?? [], results.get(b) ?? []]
        const rounds = mine.map((r, i) => {
          const other = theirs[i]
          return r.ok && other?.ok ? r.tps / other.tps : Number.NaN
        })
        const finite = rounds.filter(Number.isFinite)
        const spread =
          finite.length < 2
            ? ''
            : ` (${fmt(Math.min(...finite), 2)}–${fmt(Math.max(...finite), 2)})`
        return `${fmt(median(rounds), 2)}${spread}`
      }
      throughput.push([
        label,
        String(cell.clients),
        fmt(direct, 0),
        ...targets.slice(1).map((t) => cellOf(t.name)),
        ratio(SERVED, 'pgbouncer'),
        ratio(SERVED, DISCARDED),
      ])
      const servingThread = (name: string) => median(thread.get(name) ?? [])
      cpuRows.push([
        label,
        String(cell.clients),
        ...CPU_COLUMNS.filter(measured).map((name) => fmt(median(cpu.get(name) ?? []), 0)),
        fmt(servingThread(SERVED), 1),
        fmt(servingThread(DISCARDED), 1),
        fmt(servingThread(SERVED) - servingThread(DISCARDED), 1),
        fixed
          ? `${fmt(fixed.served, 1)} / ${fmt(fixed.discarded, 1)} (${fmt(fixed.served - fixed.discarded, 1)}) at ${fmt(fixed.rate, 0)} tps`
          : '',
      ])
      if (cell.clients === 1 && !cell.connect) {
        // One client: the mean time of a transaction is 1 / tps; the difference is the added time.
        latency.push([
          label,
          `${fmt(1e6 / direct, 0)} µs`,
          ...targets.slice(1).map((t) => signedMicros(1e6 / tps(t.name) - 1e6 / direct)),
        ])
      }
    }
    const others = targets.slice(1).map((t) => t.name)
    printTable(
      `pgbench, ${SECONDS} s per run, median of ${ROUNDS} in turns, the order reversed each round (tps and ratio to direct; the last two columns: median of the rounds' ratios, lowest–highest)`,
      [
        'workload, -M',
        'clients',
        'direct',
        ...others,
        'serve / pgbouncer',
        'serve / serve, audit discarded',
      ],
      throughput,
    )
    printTable(
      "CPU time per transaction (one statement each), µs: the relaying process's, and `palisade serve`'s serving thread alone; the audit cost is the serving thread's difference",
      [
        'workload, -M',
        'clients',
        ...CPU_COLUMNS.filter(measured),
        `${SERVED}, serving thread`,
        `${DISCARDED}, serving thread`,
        'audit cost on the serving thread, µs/statement',
        'serving thread at a fixed rate, serve / discarded (audit cost)',
      ],
      cpuRows,
    )
    printTable(
      'One client: time added to a transaction over direct',
      ['workload, -M', 'direct', ...others],
      latency,
    )
  } finally {
    await bouncer?.stop()
    await relay.stop()
    await audited.stop()
    await discarded.stop()
    for (const serveDir of serveDirs) rmSync(serveDir, { recursive: true, force: true })
    await proxy.stop()
    rmSync(dir, { recursive: true, force: true })
    await scratch.drop()
    const admin = new pg.Client({ connectionString: pgUrl })
    await admin.connect()
    await admin.query(`DROP ROLE IF EXISTS ${rlsRole}`)
    await admin.end()
  }
}
