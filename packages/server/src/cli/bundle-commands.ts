import { readFile, writeFile } from 'node:fs/promises'
import { parseArgs } from 'node:util'
import type { BundlePlan } from '../policy-as-code/bundle-plan.js'
import { parseBundleText } from '../policy-as-code/bundle-text.js'
import { connectAdmin } from './admin-client.js'
import { withTicker } from './terminal-progress.js'

const ADMIN_API = `Reaches a running server's admin API like \`palisade preview\` (--admin-url,
PALISADE_ADMIN_TOKEN or PALISADE_ADMIN_USERNAME and PALISADE_ADMIN_PASSWORD).`

export const EXPORT_HELP = `Usage: palisade export [--datasource NAME]... [--format yaml|json] [--output FILE]
                       [--with-versions]

Writes the access model (attribute definitions, users without passwords, roles with members
and parents, decision functions with source, policies, and each datasource's settings without
secrets, access and assignments) as a policy bundle: names instead of ids, sorted, so it diffs
well in git. All datasources unless --datasource names some. --with-versions adds each policy's
and decision function's version: apply then refuses to overwrite one changed since (a dry run
lists the conflicts). ${ADMIN_API}`

export const APPLY_HELP = `Usage: palisade apply FILE [--dry-run] [--json]

Brings the store to the bundle in FILE (YAML or JSON, as \`palisade export\` writes it) in one
store transaction, every step in the admin audit, and prints the plan it carried out. With
--dry-run the steps are checked and rolled back: nothing changes. A second apply of the same
bundle changes nothing. ${ADMIN_API}`

/** `palisade export` (docs/policy-as-code.md). */
export async function exportCommand(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      datasource: { type: 'string', multiple: true },
      format: { type: 'string' },
      'with-versions': { type: 'boolean' },
      output: { type: 'string', short: 'o' },
      'admin-url': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  })
  if (values.help) {
    console.log(EXPORT_HELP)
    return 0
  }
  const format = values.format ?? 'yaml'
  if (format !== 'yaml' && format !== 'json') throw new Error('--format must be yaml or json')
  const admin = await connectAdmin(values['admin-url'], env)
  const query = new URLSearchParams({ format })
  if (values['with-versions']) query.set('versions', 'true')
  for (const name of values.datasource ?? []) query.append('datasource', name)
  const text = await withTicker('exporting', env, async () => {
    const chunks: Buffer[] = []
    for await (const chunk of await admin.stream(`/policy-bundles?${query}`)) {
      chunks.push(chunk as Buffer)
    }
    return Buffer.concat(chunks).toString('utf8')
  })
  if (values.output) await writeFile(values.output, text)
  else process.stdout.write(text)
  return 0
}

/** `palisade apply` (docs/policy-as-code.md). */
export async function applyCommand(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...argv],
    options: {
      'dry-run': { type: 'boolean' },
      json: { type: 'boolean' },
      'admin-url': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    allowPositionals: true,
  })
  if (values.help) {
    console.log(APPLY_HELP)
    return 0
  }
  const [file] = positionals
  if (!file || positionals.length > 1) {
    console.error(APPLY_HELP)
    return 2
  }
  const bundle = parseBundleText(await readFile(file, 'utf8'))
  const admin = await connectAdmin(values['admin-url'], env)
  const plan = await withTicker(values['dry-run'] ? 'planning' : 'applying', env, () =>
    admin.request<BundlePlan>('POST', '/policy-bundles', {
      bundle,
      dry_run: values['dry-run'] ?? false,
    }),
  )
  console.log(values.json ? JSON.stringify(plan, null, 2) : renderPlan(plan))
  return 0
}

const MARKS = { create: '+', update: '~', delete: '-', conflict: '!' } as const

/** A plan as a terminal reads it: a summary line, then one line per step. */
export function renderPlan(plan: BundlePlan): string {
  const { create, update, delete: remove, conflict } = plan.summary
  if (plan.steps.length === 0) return 'nothing to change: the store already matches the bundle'
  const head = plan.dry_run ? 'plan (dry run, nothing changed)' : 'applied'
  const conflicts = conflict > 0 ? `, ${conflict} version conflicts (apply would refuse)` : ''
  return [
    `${head}: ${create} to create, ${update} to update, ${remove} to delete${conflicts}`,
    ...plan.steps.map((s) => {
      const fields = s.fields ? ` (${s.fields.join(', ')})` : ''
      return `  ${MARKS[s.action]} ${s.kind.replaceAll('_', ' ')} ${s.name}${fields}`
    }),
  ].join('\n')
}
