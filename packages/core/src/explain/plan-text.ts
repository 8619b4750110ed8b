import { formatNumber } from './plan-formats.js'
import type { PlanNode } from './plan-redaction.js'

/** Properties printed under a node, in PostgreSQL's order; others follow in the JSON's order. */
const ORDERED = [
  'Output',
  'Inner Unique',
  'Merge Cond',
  'Hash Cond',
  'Join Filter',
  'Index Cond',
  'Order By',
  'Recheck Cond',
  'TID Cond',
  'Filter',
  'One-Time Filter',
  'Sort Key',
  'Presorted Key',
  'Group Key',
  'Cache Key',
]
/** Fields the node's title line already shows, or that text format leaves out. */
const TITLE_FIELDS = new Set([
  'Node Type',
  'Parent Relationship',
  'Subplan Name',
  'Relation Name',
  'Schema',
  'Alias',
  'Index Name',
  'CTE Name',
  'Function Name',
  'Strategy',
  'Partial Mode',
  'Join Type',
  'Scan Direction',
  'Operation',
  'Command',
  'Parallel Aware',
  'Async Capable',
  'Startup Cost',
  'Total Cost',
  'Plan Rows',
  'Plan Width',
  'Plans',
  'Inner Unique',
])

/** `GroupAggregate`, `HashAggregate`, `MixedAggregate` by the aggregate's strategy. */
const AGGREGATE_PREFIX = new Map([
  ['Sorted', 'Group'],
  ['Hashed', 'Hash'],
  ['Mixed', 'Mixed'],
])

/** Prints plans as EXPLAIN's text format: one line per row of the result. */
export function planText(queries: readonly Record<string, unknown>[], verbose: boolean): string[] {
  const lines: string[] = []
  for (const query of queries) {
    const plan = query['Plan'] as PlanNode | undefined
    if (plan) printNode(plan, lines, 0, '', verbose)
    const settings = query['Settings']
    if (settings && typeof settings === 'object') {
      const pairs = Object.entries(settings).map(([k, v]) => `${k} = '${String(v)}'`)
      if (pairs.length > 0) lines.push(`Settings: ${pairs.join(', ')}`)
    }
    for (const key of ['Query Identifier', 'Planning Time']) {
      const value = query[key]
      if (typeof value === 'number') {
        lines.push(`${key}: ${formatNumber(key, value)}${key.endsWith('Time') ? ' ms' : ''}`)
      }
    }
  }
  return lines
}

function printNode(
  node: PlanNode,
  lines: string[],
  indent: number,
  arrow: string,
  verbose: boolean,
): void {
  const costs =
    typeof node['Startup Cost'] === 'number'
      ? `  (cost=${formatNumber('Startup Cost', node['Startup Cost'])}..${formatNumber('Total Cost', node['Total Cost'] as number)} rows=${node['Plan Rows']} width=${node['Plan Width']})`
      : ''
  lines.push(`${' '.repeat(indent)}${arrow}${title(node, verbose)}${costs}`)
  const content = indent + arrow.length
  const properties = ' '.repeat(content + 2)
  const keys = [
    ...ORDERED.filter((key) => key in node),
    ...Object.keys(node).filter((key) => !ORDERED.includes(key) && !TITLE_FIELDS.has(key)),
  ]
  for (const key of keys) {
    const value = node[key]
    if (key === 'Output' && !verbose) continue
    if (typeof value === 'string') lines.push(`${properties}${key}: ${value}`)
    else if (typeof value === 'number')
      lines.push(`${properties}${key}: ${formatNumber(key, value)}`)
    else if (Array.isArray(value) && value.every((item) => typeof item === 'string')) {
      lines.push(`${properties}${key}: ${value.join(', ')}`)
    }
  }
  for (const child of (node['Plans'] as PlanNode[] | undefined) ?? []) {
    const name = child['Subplan Name']
    if (typeof name === 'string') {
      lines.push(`${properties}${name}`)
      printNode(child, lines, content + 4, '->  ', verbose)
    } else printNode(child, lines, content + 2, '->  ', verbose)
  }
}

function title(node: PlanNode, verbose: boolean): string {
  const type = String(node['Node Type'])
  const parallel = node['Parallel Aware'] === true ? 'Parallel ' : ''
  const partial = typeof node['Partial Mode'] === 'string' && node['Partial Mode'] !== 'Simple'
  const prefix = `${partial ? `${node['Partial Mode']} ` : ''}${parallel}`
  const join = node['Join Type']
  const joinType = typeof join === 'string' && join !== 'Inner' ? join : undefined
  switch (type) {
    case 'Nested Loop':
      return `${prefix}${type}${joinType ? ` ${joinType} Join` : ''}`
    case 'Hash Join':
    case 'Merge Join':
      return `${prefix}${type.split(' ')[0]}${joinType ? ` ${joinType}` : ''} Join`
    case 'Aggregate':
      return `${prefix}${AGGREGATE_PREFIX.get(node['Strategy'] as string) ?? ''}Aggregate`
    case 'SetOp':
      return `${node['Strategy'] === 'Hashed' ? 'HashSetOp' : 'SetOp'} ${node['Command'] ?? ''}`.trim()
    case 'Index Scan':
    case 'Index Only Scan': {
      const backward = node['Scan Direction'] === 'Backward' ? ' Backward' : ''
      return `${prefix}${type}${backward} using ${node['Index Name']} on${target(node, verbose)}`
    }
    case 'Bitmap Index Scan':
      return `${type} on ${node['Index Name']}`
    case 'CTE Scan':
      return `${type} on ${node['CTE Name']}${alias(node, node['CTE Name'])}`
    case 'Function Scan':
      return `${type} on ${node['Function Name']}${alias(node, node['Function Name'])}`
    case 'Subquery Scan':
    case 'Values Scan':
    case 'WorkTable Scan':
      return `${prefix}${type} on ${node['Alias']}`
    default:
      return typeof node['Relation Name'] === 'string'
        ? `${prefix}${type} on${target(node, verbose)}`
        : `${prefix}${type}`
  }
}

/** ` schema.table alias` as PostgreSQL prints a scanned relation. */
function target(node: PlanNode, verbose: boolean): string {
  const relation = String(node['Relation Name'])
  const schema = typeof node['Schema'] === 'string' && verbose ? `${node['Schema']}.` : ''
  return ` ${schema}${relation}${alias(node, relation)}`
}

function alias(node: PlanNode, name: unknown): string {
  const value = node['Alias']
  return typeof value === 'string' && value !== name ? ` ${value}` : ''
}
