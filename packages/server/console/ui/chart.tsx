/** One bar of the timeline: a period and its statements by status. */
export interface TimelineBucket {
  start: string
  success: number
  error: number
  denied: number
}

const SERIES = [
  ['success', 'Succeeded'],
  ['error', 'Failed'],
  ['denied', 'Denied'],
] as const

const WIDTH = 720
const HEIGHT = 160

/**
 * Stacked bars of statements per hour, drawn as SVG (no chart library: one chart does not pay
 * for one). The same numbers are in a table below it for screen readers and copying.
 */
export function TimelineChart(props: { buckets: TimelineBucket[] }) {
  const { buckets } = props
  const totals = buckets.map((b) => b.success + b.error + b.denied)
  const max = Math.max(1, ...totals)
  const slot = WIDTH / Math.max(1, buckets.length)
  const sum = (key: 'success' | 'error' | 'denied') => buckets.reduce((n, b) => n + b[key], 0)
  const label = `Statements per hour: ${sum('success')} succeeded, ${sum('error')} failed, ${sum('denied')} denied`
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT + 20}`} role="img" aria-label={label}>
        {buckets.map((b, i) => {
          let y = HEIGHT
          return (
            <g key={b.start}>
              <title>
                {`${new Date(b.start).toLocaleString()}: ${b.success} ok, ${b.error} failed, ${b.denied} denied`}
              </title>
              {SERIES.map(([key]) => {
                const h = (b[key] / max) * HEIGHT
                y -= h
                return h > 0 ? (
                  <rect
                    key={key}
                    class={`bar-${key}`}
                    x={i * slot + 1}
                    y={y}
                    width={Math.max(1, slot - 2)}
                    height={h}
                  />
                ) : null
              })}
            </g>
          )
        })}
        <line x1="0" y1={HEIGHT} x2={WIDTH} y2={HEIGHT} class="axis" />
        <text x="0" y={HEIGHT + 15} class="tick">
          {buckets[0] ? new Date(buckets[0].start).toLocaleString() : ''}
        </text>
        <text x={WIDTH} y={HEIGHT + 15} class="tick" text-anchor="end">
          {buckets.at(-1) ? new Date(buckets.at(-1)?.start ?? '').toLocaleString() : ''}
        </text>
      </svg>
      <figcaption>
        {SERIES.map(([key, name]) => (
          <span key={key} class={`legend legend-${key}`}>
            {name}: {sum(key)}
          </span>
        ))}{' '}
        (peak {max} in one hour)
      </figcaption>
      <details>
        <summary>Numbers</summary>
        <table>
          <thead>
            <tr>
              <th scope="col">Hour</th>
              <th scope="col">Succeeded</th>
              <th scope="col">Failed</th>
              <th scope="col">Denied</th>
            </tr>
          </thead>
          <tbody>
            {buckets
              .filter((_, i) => totals[i] !== 0)
              .map((b) => (
                <tr key={b.start}>
                  <td>{new Date(b.start).toLocaleString()}</td>
                  <td>{b.success}</td>
                  <td>{b.error}</td>
                  <td>{b.denied}</td>
                </tr>
              ))}
          </tbody>
        </table>
      </details>
    </figure>
  )
}
