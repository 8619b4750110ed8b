import type { QuickJSHandle } from 'quickjs-emscripten-core'
import { DECISION_MEMORY_LIMIT_BYTES } from './decision-limits.js'
import type { SandboxError } from './sandbox-error.js'
import type { SandboxValues } from './sandbox-values.js'

/**
 * Describes a value thrown in the sandbox: `Name: message (line N)` for an error, the value's
 * text otherwise, and QuickJS's own memory and stack errors as limit messages. The position
 * comes from the stack trace of the artifact, whose line 1 is the source's line 1.
 */
export function describeThrown(
  values: SandboxValues,
  thrown: QuickJSHandle,
  options: { prefix?: string; lineInMessage?: boolean } = {},
): SandboxError {
  const { context, intrinsics } = values
  const prefix = options.prefix ?? ''
  const message =
    context.typeof(thrown) === 'object' && !values.isNull(thrown)
      ? values.readString(thrown, intrinsics.keys.message)
      : undefined
  if (message === undefined)
    return { message: `${prefix}a non-Error value: ${values.show(thrown, 'error')}` }
  const name = values.readString(thrown, intrinsics.keys.name) ?? ''
  const limit = engineLimit(name, message)
  if (limit) return { message: limit }
  const found = /decision\.js:(\d+):(\d+)/.exec(
    values.readString(thrown, intrinsics.keys.stack) ?? '',
  )
  const text = `${prefix}${name ? `${name}: ` : ''}${message}`
  if (!found) return { message: text }
  const line = Number(found[1])
  const where = options.lineInMessage === false ? '' : ` (line ${line})`
  return { message: `${text}${where}`, line, column: Number(found[2]) }
}

/** QuickJS's messages for its memory and stack limits, reworded for users. */
function engineLimit(name: string, message: string): string | undefined {
  if (name !== 'InternalError') return undefined
  if (message === 'out of memory') {
    return `memory limit of ${DECISION_MEMORY_LIMIT_BYTES / 1024 / 1024} MB exceeded`
  }
  if (message === 'stack overflow') return 'stack limit exceeded (recursion or nesting too deep)'
  return undefined
}
