/**
 * Prometheus text exposition format 0.0.4, the few rules a metric's lines must follow.
 * @see https://prometheus.io/docs/instrumenting/exposition_formats/#text-based-format
 */

/** The content type a scraper expects for this format. */
export const EXPOSITION_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8'

/** A label's name and its value, in the order they are printed. */
export type LabelPair = readonly [name: string, value: string]

/** A label value goes between double quotes: backslash, double quote and line feed are escaped. */
export function escapeLabelValue(value: string): string {
  return value.replace(/[\\"\n]/g, (c) => (c === '\n' ? '\\n' : `\\${c}`))
}

/** HELP text is not quoted, so only backslash and line feed are escaped. */
export function escapeHelp(text: string): string {
  return text.replace(/[\\\n]/g, (c) => (c === '\n' ? '\\n' : '\\\\'))
}

/** A sample value: Go's float spelling for the three non-finite values, JavaScript's otherwise. */
export function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN'
  if (value === Number.POSITIVE_INFINITY) return '+Inf'
  if (value === Number.NEGATIVE_INFINITY) return '-Inf'
  return String(value)
}

/** The two comment lines that open a metric family. */
export function familyHeader(name: string, help: string, type: string): string {
  return `# HELP ${name} ${escapeHelp(help)}\n# TYPE ${name} ${type}\n`
}

/** One sample: `name{label="value",…} value`, without braces when there are no labels. */
export function sampleLine(name: string, labels: readonly LabelPair[], value: number): string {
  const set =
    labels.length === 0
      ? ''
      : `{${labels.map(([key, v]) => `${key}="${escapeLabelValue(v)}"`).join(',')}}`
  return `${name}${set} ${formatValue(value)}\n`
}
