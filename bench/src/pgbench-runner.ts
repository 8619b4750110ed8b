/** Runs pgbench (the field's load tool) once and reads its report: bench/pgbench and bench/pooling. */
import { spawn } from 'node:child_process'

export interface PgbenchRun {
  port: number
  user: string
  database: string
  /** A pgbench script file. */
  script: string
  clients: number
  /** `-M`: simple, extended or prepared. */
  mode: string
  seconds: number
  /** `-C`: a new connection for every transaction. */
  connectPerTransaction?: boolean
  /** `-R`: transactions per second in all, instead of as fast as the target answers. */
  rate?: number
  password?: string
}

export interface PgbenchResult {
  tps: number
  /** Transactions completed in the run (for CPU per transaction: logins are not in `tps`). */
  transactions: number
  failed: number
  /** Mean latency per transaction in ms, as pgbench reports it. */
  latencyMs: number
  ok: boolean
  /** The first error line, or the last line of the output, when it failed. */
  note: string
}

export async function runPgbench(run: PgbenchRun): Promise<PgbenchResult> {
  // 1,000 clients need more descriptors than the usual 1,024.
  const command = [
    'ulimit -n 65536 2>/dev/null || true;',
    `exec pgbench -n -h 127.0.0.1 -p ${run.port} -U ${run.user} -c ${run.clients}`,
    `-j ${Math.min(2, run.clients)} -T ${run.seconds} -M ${run.mode}`,
    run.connectPerTransaction ? '-C' : '',
    run.rate ? `-R ${Math.round(run.rate)}` : '',
    `-f ${run.script} ${run.database}`,
  ].join(' ')
  const child = spawn('bash', ['-c', command], {
    env: { ...process.env, PGPASSWORD: run.password ?? '', PGSSLMODE: 'disable' },
  })
  let out = ''
  const collect = (d: Buffer) => {
    out += d.toString()
  }
  child.stdout.on('data', collect)
  child.stderr.on('data', collect)
  const code = await new Promise<number>((resolve) => child.once('exit', (c) => resolve(c ?? 1)))
  // With -C the connections are the work: pgbench 15 prints tps including them.
  const tps = Number(/tps = ([\d.]+) \((?:without|including)/.exec(out)?.[1] ?? Number.NaN)
  const transactions = Number(
    /number of transactions actually processed: (\d+)/.exec(out)?.[1] ?? Number.NaN,
  )
  const failed = Number(/number of failed transactions: (\d+)/.exec(out)?.[1] ?? 0)
  const latencyMs = Number(/latency average = ([\d.]+) ms/.exec(out)?.[1] ?? Number.NaN)
  const note =
    /(?:ERROR|FATAL|error):?\s*([^\n]*)/i.exec(out)?.[1]?.slice(0, 80) ??
    out.trim().split('\n').at(-1)?.slice(0, 80) ??
    ''
  // A client that aborts (pgbouncer's clashing statement names) leaves the others faster: the
  // tps of such a run means nothing, whatever the exit status says.
  const aborted = /\baborted\b/.test(out)
  // pgbench logs a failed PREPARE and goes on: behind a transaction-mode pgbouncer its Executes
  // then find another client's statement of the same name (and, in a one-statement script, the
  // same text) on the shared server connection, so such a run can even finish. It did not run
  // its own prepared statements: it counts as one that cannot run.
  const clashed = /prepared statement "[^"]*" already exists/.test(out)
  return {
    tps,
    transactions,
    failed,
    latencyMs,
    ok: code === 0 && Number.isFinite(tps) && !aborted && !clashed,
    note,
  }
}
