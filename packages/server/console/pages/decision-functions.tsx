import { useState } from 'preact/hooks'
import { api } from '../api'
import type { DecisionFunction } from '../types'
import { DeleteCard } from '../ui/delete-card'
import {
  ActionError,
  Checkbox,
  SaveError,
  Select,
  TextArea,
  TextField,
  useAction,
} from '../ui/forms'
import { PagerFor, usePaged } from '../ui/paged'
import { Link, navigate } from '../ui/router'
import { Show, useLoad } from '../ui/states'

const STARTER = `function evaluate(ctx, config) {
  // Fire the policy (apply it) unless the user holds an exempt role.
  const exempt = (ctx.session.user.roles || []).includes(config.exempt_role)
  return { fire: !exempt }
}
`

export function DecisionFunctionsPage() {
  const list = usePaged<DecisionFunction>('/decision-functions')
  return (
    <section>
      <h1 tabIndex={-1}>Decision functions</h1>
      <p>
        JavaScript, run in a sandbox, that decides whether the policies it is attached to fire.{' '}
        <Link to="/decision-functions/new" class="button primary">
          New decision function
        </Link>
      </p>
      <TextField
        label="Search functions"
        type="search"
        value={list.search}
        onChange={list.setSearch}
      />
      <Show result={list.result} isEmpty={(p) => p.total === 0} empty="No decision functions yet.">
        {(page) => (
          <>
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Context</th>
                  <th scope="col">On error</th>
                  <th scope="col">Enabled</th>
                  <th scope="col">Policies</th>
                  <th scope="col">Version</th>
                </tr>
              </thead>
              <tbody>
                {page.data.map((f) => (
                  <tr key={f.id}>
                    <td>
                      <Link to={`/decision-functions/${f.id}`}>{f.name}</Link>
                    </td>
                    <td>{f.evaluate_context}</td>
                    <td>{f.on_error}</td>
                    <td>{f.is_enabled ? 'yes' : 'no'}</td>
                    <td>{f.policy_count}</td>
                    <td>{f.version}</td>
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

export function DecisionFunctionPage(props: { id: string }) {
  const isNew = props.id === 'new'
  const fn = useLoad(
    () =>
      isNew
        ? Promise.resolve(null)
        : api<DecisionFunction>('GET', `/decision-functions/${props.id}`),
    [props.id],
  )
  return (
    <section>
      <Show result={fn} what="the decision function">
        {(f) => (
          <>
            <h1 tabIndex={-1}>{f ? `Decision function ${f.name}` : 'New decision function'}</h1>
            <FunctionEditor key={f ? `${f.id}:${f.version}` : 'new'} fn={f} onSaved={fn.reload} />
          </>
        )}
      </Show>
    </section>
  )
}

/** Parses JSON typed by the admin, or says where it is wrong. */
function parseJson(label: string, text: string): unknown {
  try {
    return text.trim() === '' ? {} : JSON.parse(text)
  } catch (e) {
    throw new Error(`${label} is not valid JSON: ${(e as Error).message}`)
  }
}

interface TestAnswer {
  success: boolean
  error?: string
  result?: { fire?: boolean; fuel_consumed: number; time_us: number; logs: string[] }
}

const SAMPLE_CONTEXT = JSON.stringify(
  {
    session: {
      user: { id: '00000000-0000-0000-0000-000000000001', username: 'alice', roles: ['analyst'] },
      datasource: { name: 'shop' },
    },
    query: { tables: ['public.orders'] },
  },
  null,
  2,
)

function FunctionEditor(props: { fn: DecisionFunction | null; onSaved: () => void }) {
  const f = props.fn
  const [name, setName] = useState(f?.name ?? '')
  const [source, setSource] = useState(f?.decision_fn ?? STARTER)
  const [config, setConfig] = useState(
    JSON.stringify(f?.decision_config ?? { exempt_role: 'auditor' }, null, 2),
  )
  const [context, setContext] = useState<string>(f?.evaluate_context ?? 'session')
  const [onError, setOnError] = useState<string>(f?.on_error ?? 'deny')
  const [logLevel, setLogLevel] = useState<string>(f?.log_level ?? 'off')
  const [enabled, setEnabled] = useState(f?.is_enabled ?? true)
  const [testContext, setTestContext] = useState(SAMPLE_CONTEXT)
  const [answer, setAnswer] = useState<TestAnswer | null>(null)
  const save = useAction()
  const test = useAction()
  const body = () => ({
    name,
    decision_fn: source,
    decision_config: parseJson('Config', config),
    evaluate_context: context,
    on_error: onError,
    log_level: logLevel,
    is_enabled: enabled,
  })
  const submit = (e: Event) => {
    e.preventDefault()
    void save.run(async () => {
      if (f) {
        await api('PUT', `/decision-functions/${f.id}`, { ...body(), version: f.version })
        props.onSaved()
      } else {
        const created = await api<DecisionFunction>('POST', '/decision-functions', body())
        navigate(`/decision-functions/${created.id}`)
      }
    })
  }
  const runTest = () =>
    test.run(async () => {
      setAnswer(null)
      setAnswer(
        await api<TestAnswer>('POST', '/decision-functions/test', {
          decision_fn: source,
          decision_config: parseJson('Config', config),
          evaluate_context: context,
          test_context: parseJson('Test context', testContext),
        }),
      )
    })
  return (
    <>
      <form class="card" onSubmit={submit}>
        {f && (
          <p>
            Version {f.version}; used by {f.policy_count} polic{f.policy_count === 1 ? 'y' : 'ies'}.
          </p>
        )}
        <div class="row">
          <TextField label="Name" name="fn-name" value={name} onChange={setName} />
          <Select
            label="Evaluate per"
            value={context}
            options={[
              ['session', 'session (once per connection)'],
              ['query', 'query (every statement)'],
            ]}
            onChange={setContext}
          />
          <Select
            label="On error"
            value={onError}
            options={[
              ['deny', 'deny (the policy fires)'],
              ['skip', 'skip (the policy is skipped)'],
            ]}
            onChange={setOnError}
          />
          <Select
            label="Log level"
            value={logLevel}
            options={['off', 'error', 'info']}
            onChange={setLogLevel}
          />
        </div>
        <TextArea
          label="Source (must define evaluate(ctx, config))"
          name="fn-source"
          rows={12}
          value={source}
          onChange={setSource}
        />
        <TextArea
          label="Config (JSON, passed as config)"
          name="fn-config"
          rows={3}
          value={config}
          onChange={setConfig}
        />
        <Checkbox
          label="Enabled (when off, attached policies always fire)"
          checked={enabled}
          onChange={setEnabled}
        />
        <SaveError error={save.error} what="function" onReload={props.onSaved} />
        <button type="submit" class="primary" disabled={save.busy}>
          {f ? 'Save function' : 'Create function'}
        </button>
      </form>
      <div class="card">
        <h2>Test runner</h2>
        <p>
          Runs the source above in the production sandbox (fuel limit 1,000,000); nothing is saved.
        </p>
        <TextArea
          label="Test context (JSON, passed as ctx)"
          name="fn-test-context"
          rows={8}
          value={testContext}
          onChange={setTestContext}
        />
        <button type="button" onClick={runTest} disabled={test.busy}>
          Run test
        </button>
        <ActionError error={test.error} />
        {answer && (
          <div
            class={`test-result ${answer.success ? 'ok' : 'failed'}`}
            role="status"
            data-testid="test-result"
          >
            {answer.success ? (
              <p>
                <strong>fire: {String(answer.result?.fire)}</strong>
              </p>
            ) : (
              <p>
                <strong>Failed:</strong> {answer.error}
              </p>
            )}
            {answer.result && (
              <>
                <p>
                  Fuel {answer.result.fuel_consumed.toLocaleString()}, time {answer.result.time_us}{' '}
                  µs
                </p>
                <h3>Logs</h3>
                {answer.result.logs.length === 0 ? (
                  <p class="state empty">No output.</p>
                ) : (
                  <pre>{answer.result.logs.join('\n')}</pre>
                )}
              </>
            )}
          </div>
        )}
      </div>
      {f && <DeleteFunction fn={f} />}
    </>
  )
}

function DeleteFunction(props: { fn: DecisionFunction }) {
  return (
    <DeleteCard
      label="Delete function"
      question={() => `Delete decision function ${props.fn.name}?`}
      path={`/decision-functions/${props.fn.id}`}
      back="/decision-functions"
    />
  )
}
