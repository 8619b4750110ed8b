import { useState } from 'preact/hooks'
import { api } from '../api'
import type { Datasource, ObjectTags, TagProposal } from '../types'
import { ActionError, TextField, useAction } from '../ui/forms'
import { Show, useLoad } from '../ui/states'

const objectName = (o: { schema_name: string; table_name: string; column_name: string | null }) =>
  [o.schema_name, o.table_name, o.column_name].filter(Boolean).join('.')

/**
 * A datasource's catalog tags and the classifier's proposals (docs/policies.md, "Tags"): tag
 * targets in policies follow them from the next statement on.
 */
export function TagsPanel(props: { ds: Datasource }) {
  const id = props.ds.id
  const tags = useLoad(() => api<ObjectTags[]>('GET', `/datasources/${id}/tags`), [id])
  const proposals = useLoad(
    () => api<TagProposal[]>('GET', `/datasources/${id}/tag-proposals`),
    [id],
  )
  const [object, setObject] = useState('')
  const [tagText, setTagText] = useState('')
  const action = useAction()
  const reload = () => {
    tags.reload()
    proposals.reload()
  }
  const save = (e: Event) => {
    e.preventDefault()
    void action.run(async () => {
      const [schema_name, table_name, ...column] = object.split('.')
      await api('PUT', `/datasources/${id}/tags`, {
        schema_name,
        table_name,
        column_name: column.length > 0 ? column.join('.') : null,
        tags: tagText
          .split(',')
          .map((t) => t.trim())
          .filter(Boolean),
      })
      setObject('')
      setTagText('')
      reload()
    })
  }
  const decide = (p: TagProposal, verdict: 'accept' | 'reject') =>
    action.run(async () => {
      await api('POST', `/datasources/${id}/tag-proposals/${p.id}/${verdict}`)
      reload()
    })
  const classify = () =>
    action.run(async () => {
      await api('POST', `/datasources/${id}/classify`)
      reload()
    })
  return (
    <div class="card">
      <h2>Tags</h2>
      <p>
        Policies whose targets name tags cover every table or column carrying the tag or one below
        it (<code>pii</code> covers <code>pii.email</code>).
      </p>
      <Show
        result={tags}
        what="the tags"
        isEmpty={(t) => t.length === 0}
        empty="Nothing is tagged."
      >
        {(list) => (
          <ul>
            {list.map((o) => (
              <li key={objectName(o)}>
                <code>{objectName(o)}</code>:{' '}
                {o.tags.map((t) => (
                  <span key={t} class="chip">
                    {t}
                  </span>
                ))}
              </li>
            ))}
          </ul>
        )}
      </Show>
      <form class="inline" onSubmit={save}>
        <TextField
          label="Table or column (schema.table or schema.table.column)"
          value={object}
          onChange={setObject}
        />
        <TextField
          label="Tags (comma-separated; empty removes)"
          value={tagText}
          onChange={setTagText}
        />
        <button type="submit" disabled={action.busy || !object}>
          Set tags
        </button>
      </form>
      <h3>Proposed tags</h3>
      <p>
        Discovery and sync propose tags from column names
        {props.ds.classification_sampling === false ? '' : ' and a sample of values (never kept)'}.{' '}
        <button type="button" onClick={classify} disabled={action.busy}>
          Classify now
        </button>
      </p>
      <Show
        result={proposals}
        what="the proposals"
        isEmpty={(p) => p.length === 0}
        empty="No proposals waiting."
      >
        {(list) => (
          <table>
            <thead>
              <tr>
                <th scope="col">Column</th>
                <th scope="col">Tag</th>
                <th scope="col">Confidence</th>
                <th scope="col">Evidence</th>
                <th scope="col">Decision</th>
              </tr>
            </thead>
            <tbody>
              {list.map((p) => (
                <tr key={p.id}>
                  <td>
                    <code>{objectName(p)}</code>
                  </td>
                  <td>{p.tag}</td>
                  <td>{Math.round(p.confidence * 100)} %</td>
                  <td>{p.evidence}</td>
                  <td>
                    <button
                      type="button"
                      onClick={() => decide(p, 'accept')}
                      disabled={action.busy}
                    >
                      Accept {p.tag} on {p.column_name}
                    </button>{' '}
                    <button
                      type="button"
                      onClick={() => decide(p, 'reject')}
                      disabled={action.busy}
                    >
                      Reject {p.tag} on {p.column_name}
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Show>
      <ActionError error={action.error} />
    </div>
  )
}
