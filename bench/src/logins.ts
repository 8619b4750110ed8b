/**
 * bench/logins: password guessing must not slow anyone else. The demo server runs in its own
 * process; a probe session sends `SELECT 1` back to back while wrong passwords arrive at a fixed
 * rate on the admin API (`POST /auth/login`, a PBKDF2 check per attempt) and on the data plane (a
 * full SCRAM exchange per attempt), then on both. The table gives the probe's latency beside the
 * attempts actually made per second.
 */
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import pg from 'pg'
import { fmt, percentile, printTable } from './stats.js'

/** Wrong logins per second on each attacked plane. */
const RATE = Number(process.env['BENCH_LOGINS_RATE'] ?? 200)
const DURATION_MS = Number(process.env['BENCH_LOGINS_MS'] ?? 4000)

interface Demo {
  dataPort: number
  adminUrl: string
  database: string
  user: string
  password: string
}

async function startDemoProcess(throttle: boolean) {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', new URL('./demo-process.ts', import.meta.url).pathname],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
      env: { ...process.env, BENCH_LOGIN_THROTTLE: throttle ? 'on' : 'off' },
    },
  )
  const line = await createInterface({ input: child.stdout })[Symbol.asyncIterator]().next()
  const demo = JSON.parse(String(line.value)) as Demo
  const stop = async () => {
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.stdin.end()
    await exited
  }
  return { demo, stop }
}

/** Calls `attempt` RATE times a second until `until`; resolves with the attempts finished. */
async function atRate(attempt: () => Promise<unknown>, until: number): Promise<number> {
  let done = 0
  const pending: Promise<unknown>[] = []
  for (let next = performance.now(); performance.now() < until; next += 1000 / RATE) {
    const wait = next - performance.now()
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
    pending.push(attempt().then(() => done++))
  }
  await Promise.all(pending)
  return done
}

export async function run(): Promise<void> {
  console.log(
    `${RATE} wrong logins per second on each attacked plane for ${DURATION_MS} ms; ` +
      'a probe session sends SELECT 1 back to back (embedded PGlite store and upstream)\n',
  )
  const rows: string[][] = []
  // Off: every guess costs a password check (the CPU worst case). On: past the address limit
  // guesses are refused unchecked (admin API) or held, then refused (data plane).
  for (const throttle of [false, true]) rows.push(...(await attackPhases(throttle)))
  printTable(
    'Probe latency during wrong logins',
    ['throttle', 'attack', 'attempts/s', 'p50', 'p99', 'max'],
    rows,
  )
}

async function attackPhases(throttle: boolean): Promise<string[][]> {
  const { demo, stop } = await startDemoProcess(throttle)
  const client = (password: string) =>
    new pg.Client({
      host: '127.0.0.1',
      port: demo.dataPort,
      user: demo.user,
      password,
      database: demo.database,
    })
  const probe = client(demo.password)
  await probe.connect()
  const adminWrong = () =>
    fetch(`${demo.adminUrl}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password: 'wrong-Passw0rd!' }),
    }).then((r) => r.text())
  const dataWrong = async () => {
    const c = client('wrong-Passw0rd!')
    c.on('error', () => {})
    await c.connect().catch(() => {})
    await c.end().catch(() => {})
  }
  const phases: [string, (() => Promise<unknown>)[]][] = [
    ['(no attack)', []],
    ['admin API', [adminWrong]],
    ['data plane', [dataWrong]],
    ['both', [adminWrong, dataWrong]],
  ]
  const rows: string[][] = []
  try {
    for (const [name, attacks] of phases) {
      const until = performance.now() + DURATION_MS
      const samples: number[] = []
      const probing = (async () => {
        while (performance.now() < until) {
          const started = performance.now()
          await probe.query('SELECT 1')
          samples.push(performance.now() - started)
        }
      })()
      const made = await Promise.all(attacks.map((a) => atRate(a, until)))
      await probing
      samples.sort((a, b) => a - b)
      rows.push([
        throttle ? 'default' : 'off',
        name,
        made.map((n) => fmt(n / (DURATION_MS / 1000), 0)).join(' + ') || '0',
        `${fmt(percentile(samples, 50), 2)} ms`,
        `${fmt(percentile(samples, 99), 2)} ms`,
        `${fmt(samples.at(-1) ?? Number.NaN, 1)} ms`,
      ])
    }
  } finally {
    await probe.end().catch(() => {})
    await stop()
  }
  return rows
}
