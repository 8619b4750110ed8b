import type {
  QuickJSContext,
  QuickJSHandle,
  QuickJSRuntime,
  QuickJSWASMModule,
} from 'quickjs-emscripten-core'
import { ConsoleCapture } from './console-capture.js'
import {
  DECISION_FUEL_LIMIT,
  DECISION_MEMORY_LIMIT_BYTES,
  DECISION_STACK_LIMIT_BYTES,
  DECISION_TIME_LIMIT_MS,
} from './decision-limits.js'
import { describeThrown } from './describe-thrown.js'
import { FuelMeter } from './fuel-meter.js'
import { prepareGlobals } from './prepare-globals.js'
import { readVerdict } from './read-verdict.js'
import { isSandboxError, type SandboxError } from './sandbox-error.js'
import { SandboxValues } from './sandbox-values.js'

/** File name QuickJS puts in positions and stack traces of decision code. */
const FILE_NAME = 'decision.js'

/** Language features of every context: ES2020 core, without Proxy and typed arrays. */
const LANGUAGE = {
  BaseObjects: true,
  Date: true,
  Eval: true, // needed to load the artifact; the global `eval` itself is deleted
  StringNormalize: true,
  RegExp: true,
  RegExpCompiler: true,
  JSON: true,
  MapSet: true,
  Promise: true, // without it an async function leaks objects and QuickJS aborts on dispose
  BigInt: true,
} as const

/**
 * One fresh QuickJS runtime and context with the limits of docs/decision-functions.md#limits, used once and closed. A
 * fresh runtime per use means nothing (globals, Symbol registry, pending Promise jobs, heap)
 * survives into the next evaluation. Results and errors are read only through intrinsics
 * captured before decision code ran. Every handle is disposed in `close()`.
 */
export class DecisionSandbox {
  readonly #runtime: QuickJSRuntime
  readonly #context: QuickJSContext
  readonly #values: SandboxValues
  readonly #console: ConsoleCapture
  readonly #handles: QuickJSHandle[] = []
  #meter: FuelMeter | undefined

  /** Creates and prepares the sandbox; no decision code runs until `begin()`. */
  constructor(module: QuickJSWASMModule) {
    this.#runtime = module.newRuntime()
    this.#runtime.setMemoryLimit(DECISION_MEMORY_LIMIT_BYTES)
    this.#runtime.setMaxStackSize(DECISION_STACK_LIMIT_BYTES)
    this.#context = this.#runtime.newContext({ intrinsics: LANGUAGE })
    const keep = (handle: QuickJSHandle) => this.#keep(handle)
    this.#values = new SandboxValues(this.#context, prepareGlobals(this.#context, keep), keep)
    this.#console = new ConsoleCapture(
      this.#values,
      keep,
      () => this.#meter?.exceeded !== undefined,
    )
  }

  /** Starts the sandbox's one use: fuel counts from here, the clock once code is parsed. */
  begin(options: { captureLogs: boolean }): void {
    if (this.#meter) throw new Error('a decision sandbox is used once')
    this.#meter = new FuelMeter()
    this.#runtime.setInterruptHandler(this.#meter.interrupt)
    this.#console.enabled = options.captureLogs
  }

  /** Fuel used since `begin()`. */
  get fuelConsumed(): number {
    return this.#meter?.fuelConsumed ?? 0
  }

  /** Captured console lines. */
  capturedLogs(): string[] {
    return this.#console.lines()
  }

  /** Parses `code` without running it; returns the syntax error, if any. */
  parse(code: string, options: { strict: boolean; stackLimit: number }): SandboxError | undefined {
    this.#runtime.setMaxStackSize(options.stackLimit)
    try {
      const result = this.#context.evalCode(code, FILE_NAME, {
        type: 'global',
        strict: options.strict,
        compileOnly: true,
      })
      if (result.error) {
        return describeThrown(this.#values, this.#keep(result.error), { lineInMessage: false })
      }
      result.value.dispose()
      return undefined
    } finally {
      this.#runtime.setMaxStackSize(DECISION_STACK_LIMIT_BYTES)
    }
  }

  /** Runs an artifact body's top level and checks that it defines `evaluate`. */
  check(body: string): SandboxError | undefined {
    const evaluate = this.#load(body)
    return this.#limitError() ?? (isSandboxError(evaluate) ? evaluate : undefined)
  }

  /** Runs an artifact body and `evaluate(ctx, config)`; returns `fire` or the error. */
  evaluate(body: string, ctxJson: string, configJson: string): boolean | SandboxError {
    // Parsed before any decision code runs, so its tampering or memory use cannot interfere.
    const ctx = this.#parseJson(ctxJson)
    const config = this.#parseJson(configJson)
    if (isSandboxError(ctx)) return ctx
    if (isSandboxError(config)) return config
    const evaluate = this.#load(body)
    if (isSandboxError(evaluate)) return this.#limitError() ?? evaluate
    const result = this.#context.callFunction(evaluate, this.#context.undefined, ctx, config)
    const answer = result.error
      ? this.#thrown(result.error, 'evaluate() threw ')
      : readVerdict(this.#values, this.#keep(result.value))
    // A limit hit anywhere (even inside a console call or an error getter) decides the outcome.
    return this.#limitError() ?? answer
  }

  /** Disposes every handle, the context and the runtime (throws if QuickJS aborts). */
  close(): void {
    for (const handle of this.#handles.reverse()) if (handle.alive) handle.dispose()
    this.#context.dispose()
    this.#runtime.dispose()
  }

  /** Evaluates the wrapper and calls it: runs the top level and returns `evaluate`. */
  #load(body: string): QuickJSHandle | SandboxError {
    const context = this.#context
    const wrapper = context.evalCode(body, FILE_NAME, { type: 'global' })
    if (wrapper.error) return this.#thrown(wrapper.error)
    this.#meter?.startClock(DECISION_TIME_LIMIT_MS)
    const made = context.callFunction(this.#keep(wrapper.value), context.undefined)
    if (made.error) return this.#thrown(made.error, 'top-level code threw ')
    const evaluate = this.#keep(made.value)
    if (context.typeof(evaluate) === 'function') return evaluate
    return { message: 'decision function must define evaluate(ctx, config)' }
  }

  #parseJson(source: string): QuickJSHandle | SandboxError {
    const { parse, json } = this.#values.intrinsics
    const text = this.#keep(this.#context.newString(source))
    const parsed = this.#context.callFunction(parse, json, text)
    if (parsed.error) return this.#thrown(parsed.error)
    return this.#keep(parsed.value)
  }

  /** An exception from the sandbox: the exceeded limit if there is one, else its description. */
  #thrown(error: QuickJSHandle, prefix = ''): SandboxError {
    this.#keep(error)
    return this.#limitError() ?? describeThrown(this.#values, error, { prefix })
  }

  #limitError(): SandboxError | undefined {
    const exceeded = this.#meter?.exceeded
    if (exceeded === 'fuel') {
      return { message: `fuel limit of ${DECISION_FUEL_LIMIT.toLocaleString('en-US')} exceeded` }
    }
    if (exceeded === 'time') {
      return { message: `time limit of ${DECISION_TIME_LIMIT_MS} ms exceeded` }
    }
    return undefined
  }

  #keep(handle: QuickJSHandle): QuickJSHandle {
    this.#handles.push(handle)
    return handle
  }
}
