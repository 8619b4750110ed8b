import { useState } from 'preact/hooks'
import { api, queryString } from '../api'
import { type TimelineBucket, TimelineChart } from '../ui/chart'
import { Select } from '../ui/forms'
import { Show, useLoad } from '../ui/states'

const WINDOWS: [string, string][] = [
  ['24', 'Last 24 hours'],
  ['168', 'Last 7 days'],
  ['720', 'Last 30 days'],
]

/** Queries and denials over time, from the query audit's hourly counts. */
export function DashboardPage() {
  const [hours, setHours] = useState('24')
  const timeline = useLoad(() => {
    const to = new Date()
    const from = new Date(to.getTime() - (Number(hours) - 1) * 3_600_000)
    return api<{ buckets: TimelineBucket[] }>(
      'GET',
      `/audit/queries/timeline${queryString({ from: from.toISOString(), to: to.toISOString() })}`,
    )
  }, [hours])
  return (
    <section>
      <h1 tabIndex={-1}>Overview</h1>
      <h2>Queries and denials</h2>
      <div class="filters">
        <Select label="Window" value={hours} options={WINDOWS} onChange={setHours} />
      </div>
      <Show result={timeline} what="the query timeline">
        {(data) => <TimelineChart buckets={data.buckets} />}
      </Show>
      <p>
        Every statement clients send is in the <a href="#/audit/queries">query audit</a>; every
        change an admin makes is in the <a href="#/audit/admin">admin audit</a>.
      </p>
    </section>
  )
}
