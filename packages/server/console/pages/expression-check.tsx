import { useEffect, useState } from 'preact/hooks'
import { type ApiFailure, api } from '../api'

export type Validation =
  | { state: 'idle' }
  | { state: 'checking' }
  | { state: 'valid'; variables: string[]; undefined_attributes: string[] }
  | { state: 'invalid'; error: string }

/** Asks the API whether the expression parses, a moment after typing stops. */
export function useExpressionCheck(expression: string, isMask: boolean): Validation {
  const [result, setResult] = useState<Validation>({ state: 'idle' })
  useEffect(() => {
    if (expression.trim() === '') {
      setResult({ state: 'idle' })
      return
    }
    setResult({ state: 'checking' })
    let live = true
    const timer = setTimeout(() => {
      api<{
        valid: boolean
        error?: string
        variables?: string[]
        undefined_attributes?: string[]
      }>('POST', '/policies/validate-expression', { expression, is_mask: isMask }).then(
        (r) => {
          if (!live) return
          setResult(
            r.valid
              ? {
                  state: 'valid',
                  variables: r.variables ?? [],
                  undefined_attributes: r.undefined_attributes ?? [],
                }
              : { state: 'invalid', error: r.error ?? 'invalid expression' },
          )
        },
        (e: ApiFailure) => live && setResult({ state: 'invalid', error: e.message }),
      )
    }, 350)
    return () => {
      live = false
      clearTimeout(timer)
    }
  }, [expression, isMask])
  return result
}

export function ExpressionStatus(props: { check: Validation }) {
  const { check } = props
  if (check.state === 'idle') return null
  if (check.state === 'checking')
    return (
      <p class="check-status" role="status">
        Checking…
      </p>
    )
  if (check.state === 'invalid')
    return (
      <p class="check-status invalid" role="status" data-testid="expression-status">
        Does not parse: {check.error}
      </p>
    )
  return (
    <p class="check-status valid" role="status" data-testid="expression-status">
      Parses.
      {check.variables.length > 0 &&
        ` Uses ${check.variables.map((v) => `{user.${v}}`).join(', ')}.`}
      {check.undefined_attributes.length > 0 &&
        ` Not defined as user attributes: ${check.undefined_attributes.join(', ')} (fails at query time).`}
    </p>
  )
}
