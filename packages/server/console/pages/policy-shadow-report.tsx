import { api } from '../api'
import type { Policy, ShadowReportAnswer } from '../types'
import { Show, useLoad } from '../ui/states'

/** What this policy, in shadow mode, would have done over the last week of the query audit. */
export function ShadowReport(props: { policy: Policy }) {
  const report = useLoad(
    () =>
      api<ShadowReportAnswer>(
        'GET',
        `/policies/${props.policy.id}/shadow-report?from=${encodeURIComponent(new Date(Date.now() - 7 * 86_400_000).toISOString())}`,
      ),
    [props.policy.id, props.policy.version],
  )
  return (
    <div class="card">
      <h2>Shadow report (last 7 days)</h2>
      <Show
        result={report}
        what="the shadow report"
        isEmpty={(r) => r.statements === 0}
        empty="No statement has met this policy yet."
      >
        {(r) => (
          <>
            <p>
              Matched {r.statements} statement{r.statements === 1 ? '' : 's'} of {r.users.length}{' '}
              user{r.users.length === 1 ? '' : 's'}; enforcing it would have refused {r.would_deny}.
            </p>
            <table>
              <thead>
                <tr>
                  <th scope="col">User</th>
                  <th scope="col">Statements</th>
                  <th scope="col">Would be refused</th>
                </tr>
              </thead>
              <tbody>
                {r.users.map((u) => (
                  <tr key={u.user_id}>
                    <td>{u.username}</td>
                    <td>{u.statements}</td>
                    <td>{u.would_deny}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            <h3>Latest statements</h3>
            <ul>
              {r.examples.map((e) => (
                <li key={e.id}>
                  <code>{e.original_query}</code> by {e.username}
                  {e.would_deny ? ' (would be refused)' : ''}
                </li>
              ))}
            </ul>
          </>
        )}
      </Show>
    </div>
  )
}
