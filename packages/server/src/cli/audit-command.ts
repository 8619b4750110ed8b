import { createWriteStream } from 'node:fs'
import { Transform, Writable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { parseArgs } from 'node:util'
import { type AuditVerification, createStore } from '@palisade/store'
import { connectAdmin } from './admin-client.js'
import { type ServeFlags, storeLocation } from './options.js'
import { isInteractive } from './terminal-progress.js'

export const AUDIT_HELP = `Usage: palisade audit verify [--data-dir DIR | --database-url URL] [--json]
       palisade audit export queries|admin [--format ndjson|csv] [--output FILE] [filters]

verify   checks the hash chains of both audit logs and reports the first broken link (exit 4).
         With --data-dir or --database-url it reads the store itself (PALISADE_SECRET_KEY as for
         serve; a PGlite data directory must not be open in a running server); otherwise it asks
         a running server's admin API.
export   streams one audit log, oldest first, as NDJSON (default) or CSV, to FILE or stdout,
         through the admin API. Filters: --since, --until, and for queries --user-id,
         --datasource-id, --status; for admin --resource-type, --resource-id, --actor-id, --action.

The admin API: --admin-url or PALISADE_ADMIN_URL (default http://127.0.0.1:5435), with
PALISADE_ADMIN_TOKEN or PALISADE_ADMIN_USERNAME and PALISADE_ADMIN_PASSWORD.`

const FILTERS = {
  queries: ['since', 'until', 'user-id', 'datasource-id', 'status'],
  admin: ['since', 'until', 'resource-type', 'resource-id', 'actor-id', 'action'],
} as const

/** A running count on the terminal, ended by `done`. */
function progress(env: NodeJS.ProcessEnv): ((text: string) => void) & { done(): void } {
  const tty = isInteractive(env)
  const show = (text: string) => {
    if (tty) process.stderr.write(`\r${text}`)
  }
  return Object.assign(show, {
    done: () => {
      if (tty) process.stderr.write('\n')
    },
  })
}

/** `palisade audit`: verify the chains, or export a log (docs/operations.md, "Audit integrity"). */
export async function auditCommand(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...argv],
    options: {
      'data-dir': { type: 'string' },
      'database-url': { type: 'string' },
      'admin-url': { type: 'string' },
      json: { type: 'boolean' },
      format: { type: 'string' },
      output: { type: 'string', short: 'o' },
      since: { type: 'string' },
      until: { type: 'string' },
      'user-id': { type: 'string' },
      'datasource-id': { type: 'string' },
      status: { type: 'string' },
      'resource-type': { type: 'string' },
      'resource-id': { type: 'string' },
      'actor-id': { type: 'string' },
      action: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    allowPositionals: true,
  })
  const [action, log] = positionals
  if (values.help) {
    console.log(AUDIT_HELP)
    return 0
  }
  if (action === 'verify') return verify(values, env)
  if (action === 'export' && (log === 'queries' || log === 'admin')) {
    const filters = Object.fromEntries(
      FILTERS[log]
        .map((name) => [name.replaceAll('-', '_'), values[name]] as const)
        .filter(([, value]) => value !== undefined),
    )
    return exportLog(log, values, filters, env)
  }
  console.error(AUDIT_HELP)
  return 2
}

async function verify(
  values: { 'data-dir'?: string; 'database-url'?: string; 'admin-url'?: string; json?: boolean },
  env: NodeJS.ProcessEnv,
): Promise<number> {
  let result: AuditVerification
  if (values['data-dir'] !== undefined || values['database-url'] !== undefined) {
    const { dataDir, databaseUrl } = storeLocation(values as ServeFlags, env)
    const store = await createStore(databaseUrl ? { dataDir, databaseUrl } : { dataDir })
    const show = progress(env)
    try {
      result = await store.audit.verify((n) => show(`checked ${n} entries`))
    } finally {
      show.done()
      await store.close()
    }
  } else {
    const admin = await connectAdmin(values['admin-url'], env)
    result = await admin.request<AuditVerification>('GET', '/audit/verify')
  }
  console.log(values.json ? JSON.stringify(result, null, 2) : renderVerification(result))
  return result.ok ? 0 : 4
}

/** A verification as a terminal reads it. */
export function renderVerification(result: AuditVerification): string {
  const names = { admin: 'admin audit', queries: 'query audit' }
  const lines = result.logs.map((l) => {
    const older = l.unchained > 0 ? `, ${l.unchained} written before chaining began` : ''
    return `${names[l.log]}: ${l.entries} entries in ${l.chains} chain${l.chains === 1 ? '' : 's'}${older}`
  })
  const broken = result.first_broken
  if (!broken) return [...lines, 'OK: every chain holds'].join('\n')
  const where = broken.chain_id
    ? `chain ${broken.chain_id}, entry ${broken.chain_seq}`
    : 'outside every chain'
  return [
    ...lines,
    `BROKEN: ${names[broken.log]}, ${where} (id ${broken.entry_id}): ${broken.reason}`,
  ].join('\n')
}

async function exportLog(
  log: 'queries' | 'admin',
  values: { 'admin-url'?: string; format?: string; output?: string },
  filters: Record<string, string | undefined>,
  env: NodeJS.ProcessEnv,
): Promise<number> {
  const format = values.format ?? 'ndjson'
  if (format !== 'ndjson' && format !== 'csv') throw new Error('--format must be ndjson or csv')
  const admin = await connectAdmin(values['admin-url'], env)
  const query = new URLSearchParams({ ...filters, format } as Record<string, string>)
  const res = await admin.stream(`/audit/${log}/export?${query}`)
  const show = progress(env)
  let lines = 0
  const counter = new TransformCounter((n) => {
    lines += n
    show(`exported ${lines} entries`)
  })
  const sink = values.output ? createWriteStream(values.output) : stdoutSink()
  try {
    await pipeline(res, counter, sink)
  } finally {
    show.done()
  }
  return 0
}

/** stdout as a pipeline's end without closing it. */
function stdoutSink(): Writable {
  return new Writable({
    write(chunk, _encoding, done) {
      process.stdout.write(chunk, done)
    },
  })
}

/** Counts line breaks passing through (entries, for NDJSON and CSV alike, give or take a header). */
class TransformCounter extends Transform {
  constructor(onLines: (n: number) => void) {
    super({
      transform(chunk: Buffer, _encoding, done) {
        let n = 0
        for (const byte of chunk) if (byte === 10) n++
        if (n > 0) onLines(n)
        done(null, chunk)
      },
    })
  }
}
