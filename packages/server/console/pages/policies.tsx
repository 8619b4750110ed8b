import { useState } from 'preact/hooks'
import { api } from '../api'
import { hasColumns, POLICY_TYPES, VALUE_REVEALING_AGGREGATES } from '../policy-kinds'
import type { DecisionFunction, Policy, Target } from '../types'
import { DeleteCard } from '../ui/delete-card'
import {
  Checkbox,
  failedField,
  SaveError,
  Select,
  TextArea,
  TextField,
  useAction,
} from '../ui/forms'
import { PagerFor, useOptions, usePaged } from '../ui/paged'
import { Link, navigate } from '../ui/router'
import { Show, useLoad } from '../ui/states'
import { ExpressionStatus, useExpressionCheck } from './expression-check'
import { PolicyAssignments } from './policy-assignments'
import { ShadowReport } from './policy-shadow-report'

export function PoliciesPage() {
  const [type, setType] = useState('')
  const list = usePaged<Policy>('/policies', { policy_type: type || undefined })
  return (
    <section>
      <h1 tabIndex={-1}>Policies</h1>
      <p>
        <Link to="/policies/new" class="button primary">
          New policy
        </Link>
      </p>
      <div class="filters">
        <TextField
          label="Search policies"
          type="search"
          value={list.search}
          onChange={list.setSearch}
        />
        <Select
          label="Type"
          value={type}
          options={[['', 'all'], ...POLICY_TYPES.map((t) => [t, t] as [string, string])]}
          onChange={setType}
        />
      </div>
      <Show result={list.result} isEmpty={(p) => p.total === 0} empty="No policies yet.">
        {(page) => (
          <>
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Type</th>
                  <th scope="col">Version</th>
                  <th scope="col">Enabled</th>
                  <th scope="col">Assignments</th>
                </tr>
              </thead>
              <tbody>
                {page.data.map((p) => (
                  <tr key={p.id}>
                    <td>
                      <Link to={`/policies/${p.id}`}>{p.name}</Link>
                    </td>
                    <td>
                      {p.policy_type}
                      {p.min_group_size !== null && ` (groups of ${p.min_group_size}+)`}
                    </td>
                    <td>{p.version}</td>
                    <td>{p.is_enabled ? 'yes' : 'no'}</td>
                    <td>{p.assignment_count}</td>
                  </tr>
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

export function PolicyPage(props: { id: string }) {
  const isNew = props.id === 'new'
  const policy = useLoad(
    () => (isNew ? Promise.resolve(null) : api<Policy>('GET', `/policies/${props.id}`)),
    [props.id],
  )
  return (
    <section>
      <Show result={policy} what="the policy">
        {(p) => (
          <>
            <h1 tabIndex={-1}>{p ? `Policy ${p.name}` : 'New policy'}</h1>
            <PolicyEditor
              key={p ? `${p.id}:${p.version}` : 'new'}
              policy={p}
              onSaved={policy.reload}
            />
            {p?.enforcement === 'shadow' && <ShadowReport policy={p} />}
            {p && <PolicyAssignments policy={p} onChanged={policy.reload} />}
            {p && <DeletePolicy policy={p} />}
          </>
        )}
      </Show>
    </section>
  )
}

const split = (text: string) =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)

interface TargetDraft {
  schemas: string
  tables: string
  columns: string
  /** Catalog tags (comma-separated); with tags, blank patterns match everything. */
  tags: string
}

function toDraft(t: Target): TargetDraft {
  return {
    schemas: t.schemas.join(', '),
    tables: t.tables.join(', '),
    columns: (t.columns ?? []).join(', '),
    tags: (t.tags ?? []).join(', '),
  }
}

const EMPTY_TARGET: TargetDraft = { schemas: '*', tables: '', columns: '', tags: '' }

/** A drafted target as the API takes it: a tag target sends only what narrows it. */
function targetBody(t: TargetDraft, withColumns: boolean) {
  const tags = split(t.tags)
  const patterns = (text: string) => (tags.length > 0 && split(text).length === 0 ? {} : null)
  return {
    ...(patterns(t.schemas) ?? { schemas: split(t.schemas) }),
    ...(patterns(t.tables) ?? { tables: split(t.tables) }),
    ...(withColumns ? (patterns(t.columns) ?? { columns: split(t.columns) }) : {}),
    ...(tags.length > 0 ? { tags } : {}),
  }
}

function PolicyEditor(props: { policy: Policy | null; onSaved: () => void }) {
  const p = props.policy
  const [name, setName] = useState(p?.name ?? '')
  const [description, setDescription] = useState(p?.description ?? '')
  const [type, setType] = useState<string>(p?.policy_type ?? 'row_filter')
  const [targets, setTargets] = useState<TargetDraft[]>(p ? p.targets.map(toDraft) : [EMPTY_TARGET])
  const [filter, setFilter] = useState(p?.filter_expression ?? '')
  const [mask, setMask] = useState(p?.mask_expression ?? '')
  const [fnId, setFnId] = useState(p?.decision_function_id ?? '')
  const [enabled, setEnabled] = useState(p?.is_enabled ?? true)
  const [enforcement, setEnforcement] = useState<string>(p?.enforcement ?? 'enforce')
  const [minGroupSize, setMinGroupSize] = useState(String(p?.min_group_size ?? ''))
  const [allowed, setAllowed] = useState<readonly string[]>(p?.allowed_aggregates ?? [])
  const functions = useOptions<DecisionFunction>(
    '/decision-functions',
    (f) => f.name,
    (f) => f.id,
  )
  const action = useAction()
  const expression = type === 'row_filter' ? filter : type === 'column_mask' ? mask : ''
  const check = useExpressionCheck(expression, type === 'column_mask')

  const body = () => ({
    name,
    description: description || null,
    policy_type: type,
    targets: targets.map((t) => targetBody(t, hasColumns(type))),
    filter_expression: type === 'row_filter' ? filter : null,
    mask_expression: type === 'column_mask' ? mask : null,
    // Blank is sent as null, so the server's 422 says the field is required.
    min_group_size:
      type === 'aggregation' && minGroupSize.trim() !== '' ? Number(minGroupSize) : null,
    allowed_aggregates: type === 'aggregation' ? allowed : null,
    decision_function_id: fnId || null,
    is_enabled: enabled,
    enforcement,
  })
  const save = (e: Event) => {
    e.preventDefault()
    void action.run(async () => {
      if (p) {
        await api('PUT', `/policies/${p.id}`, { ...body(), version: p.version })
        props.onSaved()
      } else {
        const created = await api<Policy>('POST', '/policies', body())
        navigate(`/policies/${created.id}`)
      }
    })
  }
  const setTarget = (i: number, patch: Partial<TargetDraft>) =>
    setTargets(targets.map((t, j) => (i === j ? { ...t, ...patch } : t)))

  return (
    <form class="card" onSubmit={save}>
      {p && (
        <p>
          Version {p.version}; assigned {p.assignment_count} time
          {p.assignment_count === 1 ? '' : 's'}.
        </p>
      )}
      <div class="row">
        <TextField label="Name" name="policy-name" value={name} onChange={setName} />
        <Select
          label="Policy type"
          name="policy-type"
          value={type}
          options={POLICY_TYPES}
          onChange={setType}
        />
        <Select
          label="Decision function"
          value={fnId}
          options={[['', '(none: always fires)'], ...functions]}
          onChange={setFnId}
        />
      </div>
      <TextField label="Description" value={description} onChange={setDescription} />
      <fieldset>
        <legend>Targets (patterns: exact, prefix*, or *)</legend>
        {targets.map((t, i) => (
          <div class="row" key={i}>
            <TextField
              label={`Target ${i + 1} schemas`}
              name={`target-${i}-schemas`}
              value={t.schemas}
              onChange={(v) => setTarget(i, { schemas: v })}
            />
            <TextField
              label={`Target ${i + 1} tables`}
              name={`target-${i}-tables`}
              value={t.tables}
              onChange={(v) => setTarget(i, { tables: v })}
            />
            {hasColumns(type) && (
              <TextField
                label={`Target ${i + 1} columns`}
                name={`target-${i}-columns`}
                value={t.columns}
                onChange={(v) => setTarget(i, { columns: v })}
              />
            )}
            <TextField
              label={`Target ${i + 1} tags`}
              name={`target-${i}-tags`}
              value={t.tags}
              onChange={(v) => setTarget(i, { tags: v })}
            />
            {targets.length > 1 && (
              <button
                type="button"
                class="link"
                onClick={() => setTargets(targets.filter((_, j) => j !== i))}
              >
                Remove target {i + 1}
              </button>
            )}
          </div>
        ))}
        <button type="button" onClick={() => setTargets([...targets, EMPTY_TARGET])}>
          Add target
        </button>
      </fieldset>
      {type === 'row_filter' && (
        <TextArea
          label="Filter expression (rows where it is true stay visible)"
          name="filter-expression"
          value={filter}
          onChange={setFilter}
          invalid={check.state === 'invalid'}
          hint="e.g. tenant = {user.tenant}"
        />
      )}
      {type === 'column_mask' && (
        <TextArea
          label="Mask expression (replaces the column's value)"
          name="mask-expression"
          value={mask}
          onChange={setMask}
          invalid={check.state === 'invalid'}
          hint="e.g. left(email, 1) || '***', or a library mask: mask.email(email), mask.hash(email), mask.partial(name, 1, 0)"
        />
      )}
      <ExpressionStatus check={check} />
      {type === 'aggregation' && (
        <AggregationFields
          minGroupSize={minGroupSize}
          onMinGroupSize={setMinGroupSize}
          allowed={allowed}
          onAllowed={setAllowed}
          invalid={failedField(action.error, 'min_group_size')}
        />
      )}
      <Checkbox label="Enabled" checked={enabled} onChange={setEnabled} />
      <Select
        label="Enforcement"
        name="policy-enforcement"
        value={enforcement}
        options={[
          ['enforce', 'enforce (applied to every statement)'],
          ['shadow', 'shadow (evaluated and audited, never applied)'],
        ]}
        onChange={setEnforcement}
      />
      <SaveError error={action.error} what="policy" onReload={props.onSaved} />
      <button type="submit" class="primary" disabled={action.busy}>
        {p ? 'Save policy' : 'Create policy'}
      </button>
    </form>
  )
}

/** An aggregation policy's group size and the value-revealing aggregates it allows. */
function AggregationFields(props: {
  minGroupSize: string
  onMinGroupSize: (v: string) => void
  allowed: readonly string[]
  onAllowed: (v: readonly string[]) => void
  invalid: boolean
}) {
  const toggle = (name: string, on: boolean) =>
    props.onAllowed(
      on ? [...props.allowed, name] : props.allowed.filter((allowed) => allowed !== name),
    )
  return (
    <>
      <TextField
        label="Minimum group size"
        name="min-group-size"
        type="number"
        value={props.minGroupSize}
        onChange={props.onMinGroupSize}
        invalid={props.invalid}
        hint="Every group a query returns must draw on at least this many rows (2 to 1,000,000)."
      />
      <fieldset class="aggregates">
        <legend>
          Allowed aggregates (count, sum, avg and other statistics are always allowed; these can
          return one row's value)
        </legend>
        {VALUE_REVEALING_AGGREGATES.map((name) => (
          <Checkbox
            key={name}
            label={name}
            name={`allowed-aggregate-${name}`}
            checked={props.allowed.includes(name)}
            onChange={(on) => toggle(name, on)}
          />
        ))}
      </fieldset>
    </>
  )
}

function DeletePolicy(props: { policy: Policy }) {
  return (
    <DeleteCard
      label="Delete policy"
      question={() => `Delete policy ${props.policy.name}? Its assignments go with it.`}
      path={`/policies/${props.policy.id}`}
      back="/policies"
    />
  )
}
