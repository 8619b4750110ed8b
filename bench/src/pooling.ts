/**
 * bench/pooling: many clients on a few upstream sessions. pgbench (the field's load tool) runs a
 * point query by primary key on a 10k-row table against pgbouncer in transaction mode (the query
 * with its tenant condition written by hand) and against Palisade with `pool_mode` transaction (a
 * user with a row filter and a mask: Palisade adds the condition), each with the same number of
 * upstream sessions, taking turns in one run (each cell twice, the order reversed). Palisade runs
 * three ways:
 *
 * - `palisade serve` as deployed: the CLI in its own process, its embedded store, the audit row
 *   of every statement;
 * - the same build with every audit row built, then discarded (PALISADE_BENCH_DISCARD_QUERY_AUDIT):
 *   beside the first, what the audit costs;
 * - the data plane alone, in a process of the bench's own (sessions in memory, no store).
 *
 * Needs PALISADE_TEST_PG_URL and pgbench; pgbouncer when installed. pgbouncer 1.18 cannot run
 * prepared statements in transaction mode: its cell says so. RSS is read while the clients are
 * connected.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type PgbenchResult, runPgbench } from './pgbench-runner.js'
import { startPgbouncer } from './pgbouncer.js'
import { rssBytesOf } from './process-cpu.js'
import { startProxyProcess } from './proxy-child.js'
import { PASSWORD } from './proxy-fixture.js'
import { createScratchDatabase, type ScratchDatabase } from './scratch-database.js'
import { type Serve, seed, serve } from './serve-process.js'
import { fmt, printTable } from './stats.js'

const pgUrl = process.env['PALISADE_TEST_PG_URL']
/** Seconds of each pgbench run. */
const SECONDS = Number(process.env['BENCH_POOLING_SECONDS'] ?? 5)
const CLIENTS = (process.env['BENCH_POOLING_CLIENTS'] ?? '200,1000').split(',').map(Number)
const POOLS = (process.env['BENCH_POOLING_SIZES'] ?? '10,20').split(',').map(Number)
const MODES = (process.env['BENCH_POOLING_MODES'] ?? 'simple,extended,prepared').split(',')
/** Runs of each pooler per cell, taking turns; the cell shows their mean. */
const ROUNDS = Number(process.env['BENCH_POOLING_ROUNDS'] ?? 2)
/** Seconds of one unmeasured run per pooler before each pool size's cells (0: none). */
const WARMUP = Number(process.env['BENCH_POOLING_WARMUP'] ?? 3)

const BOUNCER = 'pgbouncer 1.18, transaction mode'
const BENCH_PROCESS = 'Palisade, bench process'
const SERVED = 'palisade serve'
const DISCARDED = 'palisade serve, audit discarded'

/** A pooler under test. */
interface Pooler {
  name: string
  port: number
  user: string
  database: string
  script: string
  /** CPU time so far in µs: the process and, for `palisade serve`, its serving thread. */
  cpu(): Promise<{ process: number; servingThread?: number }>
  /** Resident memory now, in bytes. */
  rss?(): Promise<number>
}

/** A pooler's runs of one cell, with the CPU time and transactions of those that ran. */
interface Runs {
  results: PgbenchResult[]
  processMicros: number
  threadMicros: number
  transactions: number
  rss: number
}

/** The mean tps of a cell's runs, summed failures; not ok when any run failed. */
function mean(runs: readonly PgbenchResult[]): PgbenchResult {
  const failedRun = runs.find((r) => !r.ok)
  if (failedRun || runs.length === 0) return failedRun ?? { ...EMPTY, note: 'not run' }
  return {
    tps: runs.reduce((sum, r) => sum + r.tps, 0) / runs.length,
    transactions: runs.reduce((sum, r) => sum + r.transactions, 0),
    failed: runs.reduce((sum, r) => sum + r.failed, 0),
    latencyMs: runs.reduce((sum, r) => sum + r.latencyMs, 0) / runs.length,
    ok: true,
    note: '',
  }
}
const EMPTY: PgbenchResult = {
  tps: Number.NaN,
  transactions: 0,
  failed: 0,
  latencyMs: Number.NaN,
  ok: false,
  note: '',
}

/** pgbench against one pooler: -T counts the logins too (1,000 SCRAM logins take seconds). */
const pgbench = (p: Pooler, clients: number, mode: string, seconds = SECONDS) =>
  runPgbench({
    port: p.port,
    user: p.user,
    database: p.database,
    script: p.script,
    clients,
    mode,
    seconds: seconds + Math.ceil(clients / 150),
    password: PASSWORD,
  })

/** One run against a pooler, its CPU time and peak RSS added to `into`. */
async function measure(p: Pooler, clients: number, mode: string, into: Runs): Promise<void> {
  const sampling = setInterval(() => {
    p.rss?.().then(
      (r) => {
        into.rss = Math.max(into.rss, r)
      },
      () => {},
    )
  }, 1000)
  const before = await p.cpu()
  const result = await pgbench(p, clients, mode)
  const after = await p.cpu()
  clearInterval(sampling)
  into.results.push(result)
  if (!result.ok) return
  // Logins included: the per-transaction figure is an upper bound, most at 1,000 clients.
  into.processMicros += after.process - before.process
  into.threadMicros += (after.servingThread ?? Number.NaN) - (before.servingThread ?? Number.NaN)
  into.transactions += result.transactions
}

/** `palisade serve` over the scratch database, `pool_mode` transaction on `size` sessions. */
async function startServe(
  scratch: ScratchDatabase,
  size: number,
  discardAudit: boolean,
): Promise<{ served: Serve; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'palisade-bench-serve-'))
  // Every client logs in from 127.0.0.1 at once: past the per-address login budget (200).
  const served = await serve(dir, undefined, {
    discardAudit,
    env: {
      PALISADE_MAX_CONNECTIONS: '100000',
      PALISADE_MAX_PENDING_CONNECTIONS: '100000',
      PALISADE_MAX_PENDING_PER_ADDRESS: '100000',
    },
  })
  await seed(served, scratch, {
    tables: ['customers', 'orders'],
    maskEmail: true,
    poolSize: size,
    poolMode: 'transaction',
  })
  return { served, dir }
}

export async function run(): Promise<void> {
  if (!pgUrl) {
    console.log('bench/pooling needs PALISADE_TEST_PG_URL (a PostgreSQL server); skipped.\n')
    return
  }
  const scratch = await createScratchDatabase(pgUrl)
  const dir = mkdtempSync(join(tmpdir(), 'palisade-bench-pooling-'))
  // Palisade adds the tenant condition; pgbouncer's clients write it themselves.
  const proxyScript = join(dir, 'proxy.sql')
  const directScript = join(dir, 'direct.sql')
  writeFileSync(
    proxyScript,
    '\\set id random(1, 10000)\nSELECT id, amount FROM orders WHERE id = :id;\n',
  )
  writeFileSync(
    directScript,
    '\\set id random(1, 10000)\nSELECT id, amount FROM orders WHERE id = :id AND tenant = 3;\n',
  )
  const upstream = scratch.upstream
  const throughput: string[][] = []
  const cpu: string[][] = []
  try {
    for (const size of POOLS) {
      const proxy = await startProxyProcess({
        ...upstream,
        poolSize: size,
        poolMode: 'transaction',
      })
      const bouncer = await startPgbouncer(
        {
          host: String(upstream['host']),
          port: Number(upstream['port']),
          database: scratch.name,
          user: String(upstream['user']),
        },
        { mode: 'transaction', size, maxClients: 2000 },
      )
      const audited = await startServe(scratch, size, false)
      const discarded = await startServe(scratch, size, true)
      const served = (name: string, s: Serve): Pooler => ({
        name,
        port: s.dataPort,
        user: 'bench',
        database: 'bench',
        script: proxyScript,
        cpu: async () => s.cpuMicros(),
        rss: async () => rssBytesOf(s.child.pid),
      })
      // The serve pair in the middle: next to each other, and to pgbouncer, in every round.
      const poolers: Pooler[] = [
        {
          name: BENCH_PROCESS,
          port: proxy.port,
          user: 'alice',
          database: 'bench',
          script: proxyScript,
          cpu: async () => ({ process: await proxy.cpuMicros() }),
          rss: () => proxy.currentRss(),
        },
        ...(bouncer
          ? [
              {
                name: BOUNCER,
                port: bouncer.port,
                user: String(upstream['user']),
                database: scratch.name,
                script: directScript,
                cpu: async () => ({ process: bouncer.cpuMicros() }),
              },
            ]
          : []),
        served(SERVED, audited.served),
        served(DISCARDED, discarded.served),
      ]
      try {
        // One unmeasured run per pooler first (the first cell, WARMUP seconds plus the logins):
        // JIT compilation and the embedded store's WebAssembly tier-up finish before the rounds.
        for (const p of WARMUP > 0 ? poolers : []) {
          await pgbench(p, CLIENTS[0] as number, MODES[0] as string, WARMUP)
        }
        for (const clients of CLIENTS) {
          for (const mode of MODES) {
            const runs = new Map<string, Runs>(
              poolers.map((p) => [
                p.name,
                { results: [], processMicros: 0, threadMicros: 0, transactions: 0, rss: 0 },
              ]),
            )
            // Rounds in turn, the order reversed each round: on a shared machine the speed
            // drifts over a cell's seconds.
            for (let round = 0; round < ROUNDS; round++) {
              for (const p of round % 2 === 0 ? poolers : [...poolers].reverse()) {
                await measure(p, clients, mode, runs.get(p.name) as Runs)
              }
            }
            const cell = [String(clients), String(size), mode]
            throughput.push([...cell, ...throughputCells(runs, bouncer !== undefined)])
            cpu.push([...cell, ...cpuCells(runs)])
          }
        }
      } finally {
        await bouncer?.stop()
        await proxy.stop()
        for (const { served, dir: serveDir } of [audited, discarded]) {
          await served.stop()
          rmSync(serveDir, { recursive: true, force: true })
        }
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
    await scratch.drop()
  }
  const pair = '(lowest–highest round)'
  printTable(
    `pgbench point query, transaction pooling, ${ROUNDS} × ${SECONDS} s per pooler and cell after the logins, taking turns (mean tps and ratio to pgbouncer; Palisade as a user with a row filter and a mask)`,
    [
      'clients',
      'upstream sessions',
      'pgbench -M',
      BOUNCER,
      BENCH_PROCESS,
      SERVED,
      DISCARDED,
      `serve / pgbouncer ${pair}`,
      `serve / serve, audit discarded ${pair}`,
    ],
    throughput,
  )
  printTable(
    'CPU time per transaction (one statement each), µs, logins included: each process, and the serving thread of `palisade serve` alone; the audit cost is the serving thread’s difference',
    [
      'clients',
      'upstream sessions',
      'pgbench -M',
      BOUNCER,
      BENCH_PROCESS,
      SERVED,
      `${SERVED}, serving thread`,
      DISCARDED,
      `${DISCARDED}, serving thread`,
      'audit cost on the serving thread, µs/statement',
      `${SERVED} RSS`,
    ],
    cpu,
  )
}

/** The tps of each pooler (with its ratio to pgbouncer), then serve's two ratios. */
function throughputCells(runs: Map<string, Runs>, bouncerInstalled: boolean): string[] {
  const results = (name: string) => runs.get(name)?.results ?? []
  const bouncer = mean(results(BOUNCER))
  const tpsCell = (name: string) => {
    if (name === BOUNCER && !bouncerInstalled) return 'not installed'
    const r = mean(results(name))
    if (!r.ok) return `${name === BOUNCER ? 'cannot run' : 'failed'}${r.note ? `: ${r.note}` : ''}`
    const ratio = name !== BOUNCER && bouncer.ok ? ` (${fmt(r.tps / bouncer.tps, 2)}×)` : ''
    return `${fmt(r.tps, 0)}${ratio}${r.failed > 0 ? `, ${r.failed} failed` : ''}`
  }
  return [
    ...[BOUNCER, BENCH_PROCESS, SERVED, DISCARDED].map(tpsCell),
    ratioCell(results(SERVED), results(BOUNCER)),
    ratioCell(results(SERVED), results(DISCARDED)),
  ]
}

/**
 * The ratio of two poolers' mean tps, then the lowest and highest ratio of one round's runs
 * (run back to back): how far a single pair of runs strays from it on this machine.
 */
function ratioCell(a: readonly PgbenchResult[], b: readonly PgbenchResult[]): string {
  const [ma, mb] = [mean(a), mean(b)]
  if (!ma.ok || !mb.ok) return '-'
  const ratios = a.map((r, i) => r.tps / (b[i]?.tps ?? Number.NaN))
  const range =
    ratios.length < 2 ? '' : ` (${fmt(Math.min(...ratios), 2)}–${fmt(Math.max(...ratios), 2)})`
  return `${fmt(ma.tps / mb.tps, 2)}${range}`
}

/** CPU µs per transaction of each pooler, serve's serving threads and their difference, RSS. */
function cpuCells(runs: Map<string, Runs>): string[] {
  const perTransaction = (name: string, micros: (r: Runs) => number) => {
    const r = runs.get(name)
    return r && r.transactions > 0 ? micros(r) / r.transactions : Number.NaN
  }
  const whole = (name: string) =>
    fmt(
      perTransaction(name, (r) => r.processMicros),
      0,
    )
  const thread = (name: string) => perTransaction(name, (r) => r.threadMicros)
  const rss = runs.get(SERVED)?.rss ?? 0
  return [
    whole(BOUNCER),
    whole(BENCH_PROCESS),
    whole(SERVED),
    fmt(thread(SERVED), 1),
    whole(DISCARDED),
    fmt(thread(DISCARDED), 1),
    fmt(thread(SERVED) - thread(DISCARDED), 1),
    rss > 0 ? `${fmt(rss / 1024 / 1024, 0)} MB` : '-',
  ]
}
