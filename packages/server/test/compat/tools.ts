import { execFile, spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** A client program the compat suite drives, or why it cannot run on this machine. */
export type Tool = { ok: true; command: string } | { ok: false; reason: string }

/** What a finished child process printed. */
export interface Run {
  code: number
  stdout: string
  stderr: string
}

const here = dirname(fileURLToPath(import.meta.url))
export const JDBC_SOURCE = join(here, 'java', 'JdbcCompat.java')
export const PYTHON_SCRIPT = join(here, 'python', 'sqlalchemy_compat.py')
/** Programs that browse a schema of thousands of tables (wide-catalog.postgres.test.ts). */
export const WIDE_JDBC = join(here, 'java', 'WideCatalog.java')
export const WIDE_PYTHON = join(here, 'python', 'wide_catalog.py')
export const JDBC_JAR = process.env['PALISADE_COMPAT_JDBC_JAR'] ?? '/usr/share/java/postgresql.jar'

/**
 * A describe title that names the missing tool and its package when the tool is absent; the
 * reason is also printed, so a run without the tool says what it skipped.
 */
export function toolTitle(name: string, tool: Tool): string {
  if (tool.ok) return name
  console.warn(`compat suite: skipping ${name}: ${tool.reason}`)
  return `${name} (SKIPPED: ${tool.reason})`
}

/** True when `command args...` starts and exits 0. */
function runs(command: string, args: string[]): boolean {
  const result = spawnSync(command, args, { stdio: 'ignore', timeout: 20_000 })
  return result.status === 0
}

/** psql from the Debian package postgresql-client. */
export function findPsql(): Tool {
  const psql = process.env['PALISADE_COMPAT_PSQL'] ?? 'psql'
  if (runs(psql, ['--version'])) return { ok: true, command: psql }
  return { ok: false, reason: `${psql} not found (apt-get install postgresql-client)` }
}

/** java 11+ (single-file source launch) and pgjdbc from libpostgresql-jdbc-java. */
export function findJava(): Tool {
  const java = process.env['PALISADE_COMPAT_JAVA'] ?? 'java'
  const version = spawnSync(java, ['-version'], { encoding: 'utf8', timeout: 20_000 })
  if (version.status !== 0) {
    return { ok: false, reason: `${java} not found (apt-get install default-jre-headless)` }
  }
  // `java -version` prints `version "17.0.9"` (or `"1.8.0_392"` before Java 9) on stderr.
  const [, first, second] = /version "(\d+)(?:\.(\d+))?/.exec(version.stderr) ?? []
  const major = first === '1' ? Number(second) : Number(first)
  if (!(major >= 11)) {
    return {
      ok: false,
      reason: `${java} is not Java 11 or later (apt-get install default-jre-headless)`,
    }
  }
  if (!existsSync(JDBC_JAR)) {
    return { ok: false, reason: `${JDBC_JAR} not found (apt-get install libpostgresql-jdbc-java)` }
  }
  return { ok: true, command: java }
}

/**
 * The Debian python3 with psycopg2 and SQLAlchemy (python3-psycopg2, python3-sqlalchemy). It is
 * /usr/bin/python3 on purpose: a pyenv or venv `python3` earlier on PATH lacks the Debian modules.
 */
export function findPython(): Tool {
  const python = process.env['PALISADE_COMPAT_PYTHON'] ?? '/usr/bin/python3'
  if (!runs(python, ['--version'])) {
    return { ok: false, reason: `${python} not found (apt-get install python3)` }
  }
  if (!runs(python, ['-c', 'import psycopg2, sqlalchemy'])) {
    return {
      ok: false,
      reason: `${python} cannot import psycopg2 and sqlalchemy (apt-get install python3-psycopg2 python3-sqlalchemy)`,
    }
  }
  return { ok: true, command: python }
}

/**
 * Runs a client program to completion without blocking the event loop: the proxy under test
 * lives in this process and must keep answering while the child talks to it.
 */
export function run(
  command: string,
  args: string[],
  env: Record<string, string> = {},
  timeoutMs = 60_000,
): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { env: { ...process.env, ...env }, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0
        resolve({ code, stdout, stderr })
      },
    )
  })
}

/** One step's result from the JDBC or Python driver program. */
export type StepResult =
  | { step: string; ok: true; rows?: unknown[][]; value?: unknown }
  | { step: string; ok: false; sqlState: string | null; error: string }

/** Parses a driver program's JSON lines by step name; other output is kept for messages. */
export function parseSteps(out: Run): Map<string, StepResult> {
  const steps = new Map<string, StepResult>()
  for (const line of out.stdout.split('\n')) {
    if (!line.startsWith('{')) continue
    const result = JSON.parse(line) as StepResult
    steps.set(result.step, result)
  }
  return steps
}

/** A step's successful result, or an error that says what the program reported instead. */
export function stepOk(
  steps: Map<string, StepResult>,
  step: string,
  out: Run,
): { rows: unknown[][]; value: unknown } {
  const result = steps.get(step)
  if (!result) {
    throw new Error(
      `step ${step} did not report (exit ${out.code})\nstdout:\n${out.stdout}\nstderr:\n${out.stderr}`,
    )
  }
  if (!result.ok) throw new Error(`step ${step} failed: ${result.sqlState} ${result.error}`)
  return { rows: result.rows ?? [], value: result.value }
}
