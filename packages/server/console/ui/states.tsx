import type { ComponentChildren } from 'preact'
import { useCallback, useEffect, useState } from 'preact/hooks'
import { ApiFailure } from '../api'

/** What a page shows while its data loads, fails or arrives. */
export type Loaded<T> =
  | { state: 'loading'; reload: () => void }
  | { state: 'error'; error: ApiFailure; reload: () => void }
  | { state: 'ok'; data: T; reload: () => void }

function asFailure(error: unknown): ApiFailure {
  return error instanceof ApiFailure
    ? error
    : new ApiFailure(0, 'client_error', error instanceof Error ? error.message : String(error))
}

/** Loads once per change of `deps`; `reload` loads again. A stale answer is dropped. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [tick, setTick] = useState(0)
  const reload = useCallback(() => setTick((n) => n + 1), [])
  const [result, setResult] = useState<Loaded<T>>({ state: 'loading', reload })
  useEffect(() => {
    let live = true
    setResult((r) => (r.state === 'ok' ? r : { state: 'loading', reload }))
    load().then(
      (data) => live && setResult({ state: 'ok', data, reload }),
      (error) => live && setResult({ state: 'error', error: asFailure(error), reload }),
    )
    return () => {
      live = false
    }
  }, [...deps, tick])
  return result
}

export function Loading(props: { what?: string }) {
  return (
    <p class="state loading" role="status" aria-live="polite">
      Loading{props.what ? ` ${props.what}` : ''}…
    </p>
  )
}

export function Empty(props: { children: ComponentChildren }) {
  return <p class="state empty">{props.children}</p>
}

/** The API's envelope message; a 403 says the account is not an admin. */
export function ErrorBox(props: { error: ApiFailure; onRetry?: () => void }) {
  const { error } = props
  if (error.status === 403) {
    return (
      <div class="state forbidden" role="alert">
        <strong>Forbidden.</strong> This account is not an admin: {error.message}.
      </div>
    )
  }
  return (
    <div class="state error" role="alert">
      <strong>{error.status ? `Error ${error.status}` : 'Error'}:</strong> {error.message}
      {error.details.length > 0 && (
        <ul class="details">
          {error.details.map((d) => (
            <li key={`${d.field}:${d.code}`}>
              <code>{d.field}</code>: {d.message}
            </li>
          ))}
        </ul>
      )}
      {props.onRetry && (
        <button type="button" class="link" onClick={props.onRetry}>
          Retry
        </button>
      )}
    </div>
  )
}

/** Renders loading, error or the data; `isEmpty` picks the empty state. */
export function Show<T>(props: {
  result: Loaded<T>
  what?: string
  isEmpty?: (data: T) => boolean
  empty?: ComponentChildren
  children: (data: T) => ComponentChildren
}) {
  const { result } = props
  if (result.state === 'loading') return <Loading what={props.what} />
  if (result.state === 'error') return <ErrorBox error={result.error} onRetry={result.reload} />
  if (props.isEmpty?.(result.data)) return <Empty>{props.empty ?? 'Nothing here yet.'}</Empty>
  return <>{props.children(result.data)}</>
}
