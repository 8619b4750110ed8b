/**
 * pgbouncer as a reference relay for bench/proxy: a C pooler that parses nothing, in session
 * mode, in front of the same PostgreSQL database. It runs only when a `pgbouncer` binary is
 * installed (Debian: `apt-get install pgbouncer`); the bench then prints its column beside the
 * proxy's, measured in the same run on the same machine.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from './free-port.js'
import { cpuMicrosOf } from './process-cpu.js'

export interface PgbouncerTarget {
  host: string
  port: number
  database: string
  user: string
}

export interface RunningPgbouncer {
  port: number
  /** Its CPU time so far (user + system), in microseconds; NaN where /proc is not there. */
  cpuMicros(): number
  stop(): Promise<void>
}

const CANDIDATES = ['pgbouncer', '/usr/sbin/pgbouncer', '/usr/local/bin/pgbouncer']

function findBinary(): string | undefined {
  return CANDIDATES.find((bin) => spawnSync(bin, ['--version']).status === 0)
}

/**
 * Starts pgbouncer (trust auth for `target.user` unless a SCRAM password is given; session pooling of 20 server connections for
 * 200 clients unless `pooling` says otherwise) or resolves undefined when it
 * is not installed or does not come up. As root it drops to `nobody`, since it refuses to run as
 * root.
 */
export async function startPgbouncer(
  target: PgbouncerTarget,
  pooling: {
    mode?: 'session' | 'transaction'
    size?: number
    maxClients?: number
    /** Clients log in with SCRAM and this password (as they do to Palisade) instead of trust. */
    scramPassword?: string
  } = {},
): Promise<RunningPgbouncer | undefined> {
  const bin = findBinary()
  if (!bin) return undefined
  const dir = mkdtempSync(join(tmpdir(), 'palisade-bench-pgbouncer-'))
  chmodSync(dir, 0o755)
  const port = await freePort()
  writeFileSync(join(dir, 'users.txt'), `"${target.user}" "${pooling.scramPassword ?? ''}"\n`)
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `${target.database} = host=${target.host} port=${target.port} dbname=${target.database} user=${target.user}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      `auth_type = ${pooling.scramPassword ? 'scram-sha-256' : 'trust'}`,
      `auth_file = ${join(dir, 'users.txt')}`,
      `pool_mode = ${pooling.mode ?? 'session'}`,
      `default_pool_size = ${pooling.size ?? 20}`,
      `max_client_conn = ${pooling.maxClients ?? 200}`,
      '',
    ].join('\n'),
  )
  const asRoot = process.getuid?.() === 0
  const child: ChildProcess = spawn(
    bin,
    [...(asRoot ? ['-u', 'nobody'] : []), '-q', join(dir, 'pgbouncer.ini')],
    { stdio: 'ignore' },
  )
  const stop = async () => {
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGINT')
      await exited
    }
    rmSync(dir, { recursive: true, force: true })
  }
  // Listening within 5 s, or not at all.
  for (let i = 0; i < 50; i++) {
    if (child.exitCode !== null) break
    if (await accepts(port)) return { port, stop, cpuMicros: () => cpuMicrosOf(child.pid) }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  await stop()
  return undefined
}

async function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}
