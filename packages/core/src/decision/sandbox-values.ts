import type { QuickJSContext, QuickJSHandle } from 'quickjs-emscripten-core'
import { DECISION_ERROR_MAX_CHARS, DECISION_LOG_MAX_LINE_CHARS } from './decision-limits.js'
import type { Intrinsics } from './prepare-globals.js'

/** How long a sandbox string may be once copied out: a console line or an error message. */
export type TextCap = 'line' | 'error'

/**
 * Host-side reading of sandbox values, only through intrinsics captured before decision code
 * ran. Calls go through `callFunction`, which turns a throwing getter or an interrupt into an
 * error result instead of leaving an exception pending in the context.
 */
export class SandboxValues {
  readonly context: QuickJSContext
  readonly intrinsics: Intrinsics
  readonly #keep: (handle: QuickJSHandle) => QuickJSHandle

  constructor(
    context: QuickJSContext,
    intrinsics: Intrinsics,
    keep: (handle: QuickJSHandle) => QuickJSHandle,
  ) {
    this.context = context
    this.intrinsics = intrinsics
    this.#keep = keep
  }

  /** Calls `fn` with `this` undefined; undefined when it throws. The result is kept. */
  call(fn: QuickJSHandle, ...args: QuickJSHandle[]): QuickJSHandle | undefined {
    return this.callOn(fn, this.context.undefined, ...args)
  }

  /** Calls `fn` on `self`; undefined when it throws. The result is kept. */
  callOn(
    fn: QuickJSHandle,
    self: QuickJSHandle,
    ...args: QuickJSHandle[]
  ): QuickJSHandle | undefined {
    const result = this.context.callFunction(fn, self, args)
    if (result.error) {
      result.error.dispose()
      return undefined
    }
    return this.#keep(result.value)
  }

  isTrue(handle: QuickJSHandle | undefined): boolean {
    return handle !== undefined && this.context.eq(handle, this.context.true)
  }

  isNull(handle: QuickJSHandle): boolean {
    return this.context.eq(handle, this.context.null)
  }

  /** Reads a string property through the captured Reflect.get. */
  readString(object: QuickJSHandle, key: QuickJSHandle): string | undefined {
    const value = this.call(this.intrinsics.get, object, key)
    if (!value || this.context.typeof(value) !== 'string') return undefined
    return this.text(value, 'error')
  }

  /** A value as console.log would show it: strings as they are, objects as JSON, else String(). */
  show(value: QuickJSHandle, cap: TextCap): string {
    const { context, intrinsics } = this
    const type = context.typeof(value)
    if (type === 'string') return this.text(value, cap)
    if (type === 'object' && !this.isNull(value)) {
      const json = context.callFunction(intrinsics.stringify, intrinsics.json, value)
      if (json.error) json.error.dispose()
      else if (context.typeof(json.value) === 'string') return this.text(json.value, cap, true)
      else json.value.dispose()
    }
    const text = context.callFunction(intrinsics.toText, context.undefined, value)
    if (text.error) {
      text.error.dispose()
      return '[unprintable value]'
    }
    return this.text(text.value, cap, true)
  }

  /** A sandbox string, cut inside the sandbox before it is copied out, so the copy stays small. */
  text(value: QuickJSHandle, cap: TextCap, dispose = false): string {
    const { context, intrinsics } = this
    const max = cap === 'line' ? DECISION_LOG_MAX_LINE_CHARS : DECISION_ERROR_MAX_CHARS
    const end = cap === 'line' ? intrinsics.lineCap : intrinsics.errorCap
    const cut = context.callFunction(intrinsics.slice, value, intrinsics.zero, end)
    if (dispose) value.dispose()
    if (cut.error) {
      cut.error.dispose()
      return ''
    }
    const text = context.getString(cut.value)
    cut.value.dispose()
    return clip(text, max)
  }
}

/** Cuts `text` to `max` characters, marking the cut with an ellipsis. */
export function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text
}
