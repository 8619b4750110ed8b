import { useState } from 'preact/hooks'
import { ApiFailure, api } from '../api'
import type { AttributeDefinition } from '../types'
import { ActionError, Select, TextField, useAction } from '../ui/forms'
import { PagerFor, usePaged } from '../ui/paged'
import { Show } from '../ui/states'

const ENTITY_TYPES = ['user', 'table', 'column'] as const
const VALUE_TYPES = ['string', 'integer', 'boolean', 'list'] as const

/** Comma-separated text to the JSON the API takes for allowed values (null when blank). */
function allowedValues(text: string, valueType: string): unknown[] | null {
  const parts = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  if (parts.length === 0) return null
  if (valueType === 'integer') return parts.map(Number)
  if (valueType === 'boolean') return parts.map((p) => p === 'true')
  return parts
}

export function AttributesPage() {
  const [entity, setEntity] = useState('')
  const list = usePaged<AttributeDefinition>(
    '/attribute-definitions',
    { entity_type: entity || undefined },
    50,
  )
  return (
    <section>
      <h1 tabIndex={-1}>Attribute definitions</h1>
      <CreateAttribute onCreated={list.result.reload} />
      <h2>Defined attributes</h2>
      <div class="filters">
        <Select
          label="Entity type"
          value={entity}
          options={[['', 'all'], ...ENTITY_TYPES.map((t) => [t, t] as [string, string])]}
          onChange={setEntity}
        />
        <TextField
          label="Search attributes"
          type="search"
          value={list.search}
          onChange={list.setSearch}
        />
      </div>
      <Show result={list.result} isEmpty={(p) => p.total === 0} empty="No attribute definitions.">
        {(page) => (
          <>
            <table>
              <thead>
                <tr>
                  <th scope="col">Key</th>
                  <th scope="col">Entity</th>
                  <th scope="col">Display name</th>
                  <th scope="col">Type</th>
                  <th scope="col">Allowed values</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {page.data.map((d) => (
                  <AttributeRow key={d.id} def={d} onChanged={list.result.reload} />
                ))}
              </tbody>
            </table>
            <PagerFor page={page} onPage={list.setPage} />
          </>
        )}
      </Show>
    </section>
  )
}

function CreateAttribute(props: { onCreated: () => void }) {
  const [key, setKey] = useState('')
  const [entityType, setEntityType] = useState('user')
  const [valueType, setValueType] = useState('string')
  const [displayName, setDisplayName] = useState('')
  const [allowed, setAllowed] = useState('')
  const action = useAction()
  const submit = (e: Event) => {
    e.preventDefault()
    void action.run(async () => {
      await api('POST', '/attribute-definitions', {
        key,
        entity_type: entityType,
        value_type: valueType,
        display_name: displayName || undefined,
        allowed_values: allowedValues(allowed, valueType),
      })
      setKey('')
      setDisplayName('')
      setAllowed('')
      props.onCreated()
    })
  }
  return (
    <form class="card" onSubmit={submit}>
      <h2>New attribute</h2>
      <div class="row">
        <TextField label="Key" name="attr-key" value={key} onChange={setKey} />
        <Select
          label="Entity type"
          value={entityType}
          options={ENTITY_TYPES}
          onChange={setEntityType}
        />
        <Select
          label="Value type"
          value={valueType}
          options={VALUE_TYPES}
          onChange={setValueType}
        />
        <TextField label="Display name" value={displayName} onChange={setDisplayName} />
        <TextField
          label="Allowed values"
          value={allowed}
          onChange={setAllowed}
          hint="comma-separated; empty allows any value"
        />
      </div>
      <ActionError error={action.error} />
      <button type="submit" class="primary" disabled={action.busy}>
        Create attribute
      </button>
    </form>
  )
}

function AttributeRow(props: { def: AttributeDefinition; onChanged: () => void }) {
  const { def } = props
  const [editing, setEditing] = useState(false)
  const [displayName, setDisplayName] = useState(def.display_name)
  const [allowed, setAllowed] = useState((def.allowed_values ?? []).join(', '))
  const action = useAction()
  const save = () =>
    action.run(async () => {
      await api('PATCH', `/attribute-definitions/${def.id}`, {
        display_name: displayName,
        allowed_values: allowedValues(allowed, def.value_type),
      })
      setEditing(false)
      props.onChanged()
    })
  const remove = () =>
    action.run(async () => {
      if (!confirm(`Delete attribute ${def.key}?`)) return
      try {
        await api('DELETE', `/attribute-definitions/${def.id}`)
      } catch (e) {
        // Users hold values for it: say how many and ask again before removing them too.
        if (!(e instanceof ApiFailure) || e.code !== 'in_use') throw e
        if (!confirm(`${e.message}. Remove the values from those users too?`)) return
        await api('DELETE', `/attribute-definitions/${def.id}?force=true`)
      }
      props.onChanged()
    })
  return (
    <tr>
      <td>
        <code>{def.key}</code>
      </td>
      <td>{def.entity_type}</td>
      <td>
        {editing ? (
          <TextField label="Display name" value={displayName} onChange={setDisplayName} />
        ) : (
          def.display_name
        )}
      </td>
      <td>{def.value_type}</td>
      <td>
        {editing ? (
          <TextField label="Allowed values" value={allowed} onChange={setAllowed} />
        ) : (
          (def.allowed_values ?? []).join(', ') || 'any'
        )}
        <ActionError error={action.error} />
      </td>
      <td>
        {editing ? (
          <button type="button" onClick={save} disabled={action.busy}>
            Save
          </button>
        ) : (
          <button type="button" onClick={() => setEditing(true)}>
            Edit {def.key}
          </button>
        )}{' '}
        <button type="button" class="danger" onClick={remove} disabled={action.busy}>
          Delete {def.key}
        </button>
      </td>
    </tr>
  )
}
