import { readFile } from 'node:fs/promises'
import { parseArgs } from 'node:util'
import type { SimulationResult } from '../preview/simulation.js'
import { connectAdmin } from './admin-client.js'
import { withTicker } from './terminal-progress.js'

export const SIMULATE_HELP = `Usage: palisade simulate --datasource NAME --changes FILE [--since T] [--until T]
                         [--max-queries N] [--no-execute] [--json]

Replays the audited statements of datasource NAME (newest first, each distinct statement of
each user once, --max-queries default 100) under the current policies and under the change in
FILE (JSON: create_policies, update_policies, delete_policies, assign, unassign; see
docs/preview-and-simulation.md), and prints what the change does to each. The change is applied
in a store transaction that is rolled back: nothing is saved. Queries run upstream READ ONLY to
compare rows unless --no-execute. Reaches a running server's admin API like \`palisade preview\`.`

/** `palisade simulate`: what-if replay of the query audit (docs/preview-and-simulation.md). */
export async function simulateCommand(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      datasource: { type: 'string' },
      changes: { type: 'string' },
      since: { type: 'string' },
      until: { type: 'string' },
      'max-queries': { type: 'string' },
      'no-execute': { type: 'boolean' },
      json: { type: 'boolean' },
      'admin-url': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  })
  if (values.help) {
    console.log(SIMULATE_HELP)
    return 0
  }
  if (!values.datasource || !values.changes) {
    console.error(SIMULATE_HELP)
    return 2
  }
  const changes = JSON.parse(await readFile(values.changes, 'utf8')) as unknown
  const window: Record<string, unknown> = {}
  if (values.since) window['from'] = values.since
  if (values.until) window['to'] = values.until
  if (values['max-queries']) window['max_queries'] = Number(values['max-queries'])
  const admin = await connectAdmin(values['admin-url'], env)
  // The server replays while the terminal waits: show that it is working.
  const result = await withTicker('simulating', env, () =>
    admin.request<SimulationResult>('POST', '/simulations', {
      datasource_name: values.datasource,
      changes,
      window,
      execute: !values['no-execute'],
    }),
  )
  console.log(values.json ? JSON.stringify(result, null, 2) : renderSimulation(result))
  return 0
}

/** A simulation as a terminal reads it: the summary, then every query the change affects. */
export function renderSimulation(result: SimulationResult): string {
  const s = result.summary
  const lines = [
    `${result.datasource.name}: ${s.queries} statements of ${s.users} users replayed`,
    `  unchanged ${s.unchanged}, changed ${s.changed}, newly refused ${s.newly_refused}, newly allowed ${s.newly_allowed}`,
    `  fewer rows ${s.fewer_rows}, more rows ${s.more_rows}`,
  ]
  for (const q of result.queries) {
    if (q.change === 'unchanged') continue
    lines.push('', `${q.change.replace('_', ' ')}: ${q.user.username} (${q.occurrences}×)`)
    lines.push(`  ${q.original_sql}`)
    if (q.after.error) lines.push(`  now: ERROR ${q.after.error.sqlstate} ${q.after.error.message}`)
    if (q.rows_delta !== null && q.rows_delta !== 0) {
      lines.push(`  rows: ${q.before.rows} → ${q.after.rows}`)
    }
    if (q.columns_removed.length > 0)
      lines.push(`  columns removed: ${q.columns_removed.join(', ')}`)
    if (q.columns_masked.length > 0) lines.push(`  columns masked: ${q.columns_masked.join(', ')}`)
    if (q.columns_unmasked.length > 0) {
      lines.push(`  columns unmasked: ${q.columns_unmasked.join(', ')}`)
    }
  }
  return lines.join('\n')
}
