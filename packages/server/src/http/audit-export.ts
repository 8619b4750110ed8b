/**
 * Streams audit entries for SIEM ingestion (`GET /audit/queries/export`, `/audit/admin/export`):
 * NDJSON (one JSON object per line) or CSV (RFC 4180, a header row, null as an empty field).
 * Entries are read from the store page by page as the client reads, so an export of millions
 * of rows holds one page in memory.
 */
import type { Context } from 'hono'

export type ExportFormat = 'ndjson' | 'csv'

/** One CSV field: quoted when it holds a comma, a quote or a line break. */
function csvField(value: unknown): string {
  if (value === null || value === undefined) return ''
  const text = typeof value === 'string' ? value : String(value)
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

/**
 * The response body for `entries` in `format`, and its content type. The first entry is read
 * before the response starts, so a bad filter is still a clean 400 rather than a cut stream.
 */
export async function exportBody<T extends object>(
  entries: AsyncGenerator<T>,
  format: ExportFormat,
): Promise<{ body: ReadableStream<Uint8Array>; contentType: string }> {
  const encoder = new TextEncoder()
  let first: IteratorResult<T> | undefined = await entries.next()
  let header: (keyof T & string)[] | undefined
  const line = (entry: T): string => {
    if (format === 'ndjson') return `${JSON.stringify(entry)}\n`
    let out = ''
    if (!header) {
      header = Object.keys(entry) as (keyof T & string)[]
      out = `${header.join(',')}\r\n`
    }
    return `${out}${header.map((key) => csvField(entry[key])).join(',')}\r\n`
  }
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      // A few hundred entries per chunk: fewer, larger writes to the socket.
      let chunk = ''
      for (let i = 0; i < 200; i++) {
        const next = first ?? (await entries.next())
        first = undefined
        if (next.done) {
          if (chunk !== '') controller.enqueue(encoder.encode(chunk))
          controller.close()
          return
        }
        chunk += line(next.value)
      }
      controller.enqueue(encoder.encode(chunk))
    },
    async cancel() {
      await entries.return(undefined)
    },
  })
  const contentType =
    format === 'ndjson' ? 'application/x-ndjson; charset=utf-8' : 'text/csv; charset=utf-8'
  return { body, contentType }
}

/** The response of an export route: the stream, its type and the file name it suggests. */
export async function exportResponse<T extends object>(
  c: Context,
  entries: AsyncGenerator<T>,
  format: ExportFormat | undefined,
  log: 'query' | 'admin',
): Promise<Response> {
  const chosen = format ?? 'ndjson'
  const { body, contentType } = await exportBody(entries, chosen)
  return c.body(body, 200, {
    'Content-Type': contentType,
    'Content-Disposition': `attachment; filename="palisade-${log}-audit.${chosen}"`,
  })
}
