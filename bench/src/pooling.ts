/**
 * bench/pooling: many clients on a few upstream sessions. pgbench (the field's load tool) runs a
 * point query by primary key on a 10k-row table against pgbouncer in transaction mode (the query
 * with its tenant condition written by hand) and against Palisade with `pool_mode` transaction (a
 * user with a row filter and a mask: Palisade adds the condition), each with the same number of
 * upstream sessions, taking turns in one run (each cell twice, the order swapped). Needs
 * PALISADE_TEST_PG_URL and pgbench; pgbouncer when installed. pgbouncer 1.18 cannot run prepared
 * statements in transaction mode: its cell says so. Palisade's RSS is read while its clients are
 * connected.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type PgbenchResult, runPgbench } from './pgbench-runner.js'
import { startPgbouncer } from './pgbouncer.js'
import { startProxyProcess } from './proxy-child.js'
import { PASSWORD } from './proxy-fixture.js'
import { createScratchDatabase } from './scratch-database.js'
import { fmt, printTable } from './stats.js'

const pgUrl = process.env['PALISADE_TEST_PG_URL']
/** Seconds of each pgbench run. */
const SECONDS = Number(process.env['BENCH_POOLING_SECONDS'] ?? 5)
const CLIENTS = (process.env['BENCH_POOLING_CLIENTS'] ?? '200,1000').split(',').map(Number)
const POOLS = (process.env['BENCH_POOLING_SIZES'] ?? '10,20').split(',').map(Number)
const MODES = (process.env['BENCH_POOLING_MODES'] ?? 'simple,extended,prepared').split(',')
/** Runs of each pooler per cell, taking turns; the cell shows their mean. */
const ROUNDS = Number(process.env['BENCH_POOLING_ROUNDS'] ?? 2)

/** The mean tps of a cell's runs, summed failures; not ok when any run failed. */
function mean(runs: readonly PgbenchResult[]): PgbenchResult {
  const failedRun = runs.find((r) => !r.ok)
  if (failedRun || runs.length === 0) return failedRun ?? { ...EMPTY, note: 'not run' }
  return {
    tps: runs.reduce((sum, r) => sum + r.tps, 0) / runs.length,
    failed: runs.reduce((sum, r) => sum + r.failed, 0),
    latencyMs: runs.reduce((sum, r) => sum + r.latencyMs, 0) / runs.length,
    ok: true,
    note: '',
  }
}
/**
 * The lowest and highest ratio of one round's runs (run back to back): how far a single pair of
 * runs strays from the cell's mean on this machine.
 */
function roundRange(proxy: readonly PgbenchResult[], bouncer: readonly PgbenchResult[]): string {
  const ratios = proxy.map((p, i) => p.tps / (bouncer[i]?.tps ?? Number.NaN))
  if (ratios.length < 2) return ''
  return `(${fmt(Math.min(...ratios), 2)}–${fmt(Math.max(...ratios), 2)})`
}
const EMPTY: PgbenchResult = {
  tps: Number.NaN,
  failed: 0,
  latencyMs: Number.NaN,
  ok: false,
  note: '',
}

/** pgbench against one pooler: -T counts the logins too (1,000 SCRAM logins take seconds). */
const pgbench = (
  port: number,
  user: string,
  database: string,
  script: string,
  clients: number,
  mode: string,
) =>
  runPgbench({
    port,
    user,
    database,
    script,
    clients,
    mode,
    seconds: SECONDS + Math.ceil(clients / 150),
    password: PASSWORD,
  })

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
  const rows: string[][] = []
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
      try {
        for (const clients of CLIENTS) {
          for (const mode of MODES) {
            // Rounds in turn, the order swapped each round (pgbouncer first, then Palisade
            // first): on a shared machine the speed drifts over a cell's seconds.
            const viaBouncer: PgbenchResult[] = []
            const viaProxy: PgbenchResult[] = []
            let rss = 0
            let cpu = 0
            const runBouncer = async () => {
              if (bouncer) {
                viaBouncer.push(
                  await pgbench(
                    bouncer.port,
                    String(upstream['user']),
                    scratch.name,
                    directScript,
                    clients,
                    mode,
                  ),
                )
              }
            }
            const runProxy = async () => {
              const sampling = setInterval(() => {
                proxy.currentRss().then(
                  (r) => {
                    rss = Math.max(rss, r)
                  },
                  () => {},
                )
              }, 1000)
              const cpuBefore = await proxy.cpuMicros()
              viaProxy.push(await pgbench(proxy.port, 'alice', 'bench', proxyScript, clients, mode))
              cpu += (await proxy.cpuMicros()) - cpuBefore
              clearInterval(sampling)
            }
            for (let round = 0; round < ROUNDS; round++) {
              if (round % 2 === 0) {
                await runBouncer()
                await runProxy()
              } else {
                await runProxy()
                await runBouncer()
              }
            }
            const seconds = (SECONDS + Math.ceil(clients / 150)) * ROUNDS
            const bouncerRun = mean(viaBouncer)
            const proxyRun = mean(viaProxy)
            const bouncerCell = !bouncer
              ? 'not installed'
              : bouncerRun.ok
                ? `${fmt(bouncerRun.tps, 0)} (${bouncerRun.failed} failed)`
                : `cannot run${bouncerRun.note ? `: ${bouncerRun.note}` : ''}`
            const proxyCell = proxyRun.ok
              ? `${fmt(proxyRun.tps, 0)} (${proxyRun.failed} failed)`
              : `failed: ${proxyRun.note}`
            const ratio =
              bouncerRun.ok && proxyRun.ok
                ? `${fmt(proxyRun.tps / bouncerRun.tps, 2)} ${roundRange(viaProxy, viaBouncer)}`
                : '-'
            rows.push([
              String(clients),
              String(size),
              mode,
              bouncerCell,
              proxyCell,
              ratio,
              // Logins included: the per-transaction figure is an upper bound at 1,000 clients.
              proxyRun.ok ? fmt(cpu / (proxyRun.tps * seconds), 0) : '-',
              `${fmt(rss / 1024 / 1024, 0)} MB`,
            ])
          }
        }
      } finally {
        await bouncer?.stop()
        await proxy.stop()
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
    await scratch.drop()
  }
  printTable(
    `pgbench point query, transaction pooling, ${ROUNDS} × ${SECONDS} s per pooler and cell after the logins, taking turns (mean tps; Palisade as a user with a row filter and a mask)`,
    [
      'clients',
      'upstream sessions',
      'pgbench -M',
      'pgbouncer 1.18, transaction mode',
      'Palisade, pool_mode transaction',
      'Palisade / pgbouncer (lowest–highest round)',
      'Palisade CPU µs per transaction',
      'Palisade RSS',
    ],
    rows,
  )
}
