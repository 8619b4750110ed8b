import { parseArgs } from 'node:util'
import type { PreviewResult } from '../preview/preview-session.js'
import { connectAdmin } from './admin-client.js'
import { formatTable } from './text-table.js'

export const PREVIEW_HELP = `Usage: palisade preview --as USER --datasource NAME [--execute] [--limit N] [--json] SQL

Shows what USER's session would do with SQL on datasource NAME: the rewritten SQL and the
policies applied per statement, or the error the user would get; with --execute, the first rows
(--limit, default 20) run upstream in a READ ONLY transaction. Reaches a running server's
admin API (--admin-url, PALISADE_ADMIN_URL; PALISADE_ADMIN_TOKEN or PALISADE_ADMIN_USERNAME and
PALISADE_ADMIN_PASSWORD). Every preview is recorded in the admin audit.`

/** `palisade preview`: prints the preview of SQL as a user (docs/preview-and-simulation.md). */
export async function previewCommand(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...argv],
    options: {
      as: { type: 'string' },
      datasource: { type: 'string' },
      execute: { type: 'boolean' },
      limit: { type: 'string' },
      json: { type: 'boolean' },
      'admin-url': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    allowPositionals: true,
  })
  if (values.help) {
    console.log(PREVIEW_HELP)
    return 0
  }
  const sql = positionals.join(' ')
  if (!values.as || !values.datasource || sql.trim() === '') {
    console.error(PREVIEW_HELP)
    return 2
  }
  const limit = values.limit === undefined ? 20 : Number(values.limit)
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
    throw new Error('--limit must be an integer from 1 to 1000')
  }
  const admin = await connectAdmin(values['admin-url'], env)
  const result = await admin.request<PreviewResult>('POST', '/preview', {
    username: values.as,
    datasource_name: values.datasource,
    sql,
    execute: values.execute ?? false,
    limit,
  })
  console.log(values.json ? JSON.stringify(result, null, 2) : renderPreview(result))
  return result.allowed ? 0 : 3
}

/** A preview as a terminal reads it. */
export function renderPreview(result: PreviewResult): string {
  const lines: string[] = []
  const who = `${result.user.username} on ${result.datasource.name}`
  if (result.error) {
    const e = result.error
    lines.push(`${who}: refused`, `ERROR:  ${e.message}  (SQLSTATE ${e.sqlstate})`)
    if (e.detail) lines.push(`DETAIL:  ${e.detail}`)
    if (e.hint) lines.push(`HINT:  ${e.hint}`)
    if (e.audit_message && e.audit_message !== e.message) lines.push(`audit:  ${e.audit_message}`)
    return lines.join('\n')
  }
  lines.push(`${who}: allowed`)
  for (const [i, s] of result.statements.entries()) {
    lines.push('', `-- statement ${i + 1} (${s.statement_type})`, s.original_sql)
    lines.push('-- rewritten', s.rewritten_sql)
    const policies = s.policies_applied.map((p) => {
      const decided = p.decision
        ? p.decision.result.fire
          ? ', decided: fire'
          : ', decided: skip'
        : ''
      return `${p.name} v${p.version}${decided}`
    })
    lines.push(`-- policies: ${policies.length > 0 ? policies.join(', ') : 'none'}`)
    if (s.not_executed) lines.push(`-- not run: ${s.not_executed}`)
    if (s.error) lines.push(`ERROR:  ${s.error.message}  (SQLSTATE ${s.error.sqlstate})`)
    if (s.result) {
      lines.push(
        formatTable(
          s.result.columns.map((c) => c.name),
          s.result.rows,
        ),
      )
      const more = s.result.truncated ? ', more not shown' : ''
      lines.push(`(${s.result.row_count} ${s.result.row_count === 1 ? 'row' : 'rows'}${more})`)
    }
  }
  return lines.join('\n')
}
