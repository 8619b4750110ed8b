/** Rows as psql prints them: a header, a rule, and padded cells; NULL is empty. */
export function formatTable(
  header: readonly string[],
  rows: readonly (readonly (string | null)[])[],
): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)))
  const line = (cells: readonly (string | null)[]) =>
    ` ${cells.map((c, i) => (c ?? '').padEnd(widths[i] ?? 0)).join(' | ')}`.trimEnd()
  return [line(header), widths.map((w) => '-'.repeat(w + 2)).join('+'), ...rows.map(line)].join(
    '\n',
  )
}
