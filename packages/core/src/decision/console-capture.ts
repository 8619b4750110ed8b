import type { QuickJSHandle } from 'quickjs-emscripten-core'
import { DECISION_LOG_MAX_LINE_CHARS, DECISION_LOG_MAX_LINES } from './decision-limits.js'
import { clip, type SandboxValues } from './sandbox-values.js'

const METHODS = [
  ['log', ''],
  ['info', ''],
  ['debug', ''],
  ['warn', '[warn] '],
  ['error', '[error] '],
] as const

/**
 * The sandbox's `console`: host functions made with `newFunction` that format their arguments
 * like console.log and keep at most 100 lines of 1,000 characters. With capture off (log
 * level `off`) the methods exist and do nothing, so decision code that logs still runs.
 */
export class ConsoleCapture {
  enabled = false
  readonly #values: SandboxValues
  readonly #stopped: () => boolean
  readonly #lines: string[] = []
  #dropped = 0

  /** Installs `console` on the global object; `stopped` tells when a limit has been hit. */
  constructor(
    values: SandboxValues,
    keep: (handle: QuickJSHandle) => QuickJSHandle,
    stopped: () => boolean,
  ) {
    this.#values = values
    this.#stopped = stopped
    const { context } = values
    const console = keep(context.newObject())
    for (const [name, prefix] of METHODS) {
      const method = context.newFunction(name, (...args) => this.#print(prefix, args))
      context.setProp(console, name, keep(method))
    }
    context.defineProp(context.global, 'console', { value: console, configurable: true })
  }

  /** The captured lines, with a note when some were dropped. */
  lines(): string[] {
    if (this.#dropped === 0) return [...this.#lines]
    return [...this.#lines, `[${this.#dropped} more console lines were not captured]`]
  }

  #print(prefix: string, args: QuickJSHandle[]): void {
    if (!this.enabled || this.#stopped()) return
    if (this.#lines.length >= DECISION_LOG_MAX_LINES) {
      this.#dropped++
      return
    }
    let line = prefix
    for (const [i, arg] of args.entries()) {
      if (line.length > DECISION_LOG_MAX_LINE_CHARS || this.#stopped()) break
      line += (i === 0 ? '' : ' ') + this.#values.show(arg, 'line')
    }
    this.#lines.push(clip(line, DECISION_LOG_MAX_LINE_CHARS))
  }
}
