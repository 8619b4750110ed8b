/**
 * EXPLAIN's structured formats, printed from a (redacted) JSON plan the way PostgreSQL prints
 * them: JSON and YAML with two-space indents, XML in PostgreSQL's explain namespace.
 * @see https://www.postgresql.org/docs/current/sql-explain.html
 */

type Value = unknown

/** Costs print with two decimals, times with three, as PostgreSQL prints them. */
export function formatNumber(key: string, value: number): string {
  if (key.endsWith(' Cost')) return value.toFixed(2)
  if (key.endsWith(' Time')) return value.toFixed(3)
  return String(value)
}

export function planJson(queries: readonly Value[]): string {
  const print = (value: Value, key: string, indent: string): string => {
    if (typeof value === 'number') return formatNumber(key, value)
    if (Array.isArray(value)) {
      if (value.length === 0) return '[]'
      const inner = `${indent}  `
      return `[\n${value.map((item) => inner + print(item, key, inner)).join(',\n')}\n${indent}]`
    }
    if (value !== null && typeof value === 'object') {
      const inner = `${indent}  `
      const fields = Object.entries(value).map(
        ([k, v]) => `${inner}${JSON.stringify(k)}: ${print(v, k, inner)}`,
      )
      return `{\n${fields.join(',\n')}\n${indent}}`
    }
    return JSON.stringify(value)
  }
  return print(queries, '', '')
}

export function planYaml(queries: readonly Value[]): string {
  const lines: string[] = []
  const scalar = (key: string, value: Value) =>
    typeof value === 'number'
      ? formatNumber(key, value)
      : typeof value === 'string'
        ? JSON.stringify(value)
        : String(value)
  const mapping = (object: Record<string, Value>, indent: string, first: string) => {
    let prefix = first
    for (const [key, value] of Object.entries(object)) {
      if (Array.isArray(value) || (value !== null && typeof value === 'object')) {
        lines.push(`${prefix}${key}: `)
        block(value, key, `${indent}  `)
      } else lines.push(`${prefix}${key}: ${scalar(key, value)}`)
      prefix = indent
    }
  }
  const block = (value: Value, key: string, indent: string) => {
    if (Array.isArray(value)) {
      for (const item of value) {
        if (item !== null && typeof item === 'object' && !Array.isArray(item)) {
          mapping(item as Record<string, Value>, `${indent}  `, `${indent}- `)
        } else lines.push(`${indent}- ${scalar(key, item)}`)
      }
    } else mapping(value as Record<string, Value>, indent, indent)
  }
  block(queries, '', '')
  return lines.join('\n')
}

export function planXml(queries: readonly Value[]): string {
  const lines = ['<explain xmlns="http://www.postgresql.org/2009/explain">']
  const escapeXml = (text: string) =>
    text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
  const element = (key: string, value: Value, indent: string) => {
    const tag = key.replace(/ /g, '-')
    if (Array.isArray(value)) {
      lines.push(`${indent}<${tag}>`)
      // Lists of plans hold <Plan> elements; other lists hold <Item>s.
      const itemTag = key === 'Plans' ? 'Plan' : 'Item'
      for (const item of value) element(itemTag, item, `${indent}  `)
      lines.push(`${indent}</${tag}>`)
    } else if (value !== null && typeof value === 'object') {
      lines.push(`${indent}<${tag}>`)
      for (const [k, v] of Object.entries(value)) element(k, v, `${indent}  `)
      lines.push(`${indent}</${tag}>`)
    } else {
      const text = typeof value === 'number' ? formatNumber(key, value) : String(value)
      lines.push(`${indent}<${tag}>${escapeXml(text)}</${tag}>`)
    }
  }
  for (const query of queries) element('Query', query, '  ')
  lines.push('</explain>')
  return lines.join('\n')
}
