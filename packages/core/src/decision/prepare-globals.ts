import type { QuickJSContext, QuickJSHandle } from 'quickjs-emscripten-core'
import { DECISION_ERROR_MAX_CHARS, DECISION_LOG_MAX_LINE_CHARS } from './decision-limits.js'

/**
 * Built-ins captured from a fresh context before any decision code runs, plus the strings and
 * numbers the host passes back in later (made up front, so a sandbox that has used up its
 * memory cannot make them fail).
 */
export interface Intrinsics {
  json: QuickJSHandle
  parse: QuickJSHandle
  stringify: QuickJSHandle
  toText: QuickJSHandle
  slice: QuickJSHandle
  get: QuickJSHandle
  isArray: QuickJSHandle
  getPrototypeOf: QuickJSHandle
  getOwnPropertyDescriptor: QuickJSHandle
  hasOwn: QuickJSHandle
  objectPrototype: QuickJSHandle
  zero: QuickJSHandle
  lineCap: QuickJSHandle
  errorCap: QuickJSHandle
  keys: Record<'fire' | 'value' | 'message' | 'name' | 'stack', QuickJSHandle>
}

// Globals outside ES2020 core, plus `eval`; evaluates to one function of each other kind so
// their constructors can be blocked too.
const SETUP = `for (const name of ['eval', 'Promise', 'WeakRef', 'FinalizationRegistry',
  'SharedArrayBuffer', 'Atomics']) delete globalThis[name];
[function* () {}, async function () {}, async function* () {}]`

/**
 * Captures the intrinsics and removes code generation from strings: `eval` is deleted and the
 * Function, GeneratorFunction, AsyncFunction and AsyncGeneratorFunction constructors are
 * replaced by one that throws an EvalError. `keep` takes ownership of every handle.
 */
export function prepareGlobals(
  context: QuickJSContext,
  keep: (handle: QuickJSHandle) => QuickJSHandle,
): Intrinsics {
  const prop = (object: QuickJSHandle, key: string) => keep(context.getProp(object, key))
  const global = context.global
  const ObjectCtor = prop(global, 'Object')
  const objectPrototype = prop(ObjectCtor, 'prototype')
  const json = prop(global, 'JSON')
  const StringCtor = prop(global, 'String')
  const getPrototypeOf = prop(ObjectCtor, 'getPrototypeOf')
  const key = (text: string) => keep(context.newString(text))
  const number = (value: number) => keep(context.newNumber(value))
  const intrinsics: Intrinsics = {
    json,
    parse: prop(json, 'parse'),
    stringify: prop(json, 'stringify'),
    toText: StringCtor,
    slice: prop(prop(StringCtor, 'prototype'), 'slice'),
    get: prop(prop(global, 'Reflect'), 'get'),
    isArray: prop(prop(global, 'Array'), 'isArray'),
    getPrototypeOf,
    getOwnPropertyDescriptor: prop(ObjectCtor, 'getOwnPropertyDescriptor'),
    hasOwn: prop(objectPrototype, 'hasOwnProperty'),
    objectPrototype,
    zero: number(0),
    lineCap: number(DECISION_LOG_MAX_LINE_CHARS + 1),
    errorCap: number(DECISION_ERROR_MAX_CHARS + 1),
    keys: {
      fire: key('fire'),
      value: key('value'),
      message: key('message'),
      name: key('name'),
      stack: key('stack'),
    },
  }

  const kinds = context.evalCode(SETUP, 'setup.js', { type: 'global' })
  if (kinds.error) {
    keep(kinds.error)
    throw new Error('decision sandbox set-up failed')
  }
  const functionPrototype = prop(prop(global, 'Function'), 'prototype')
  const prototypes = [functionPrototype]
  for (const index of [0, 1, 2]) {
    const fn = keep(context.getProp(keep(kinds.value), index))
    const proto = context.callFunction(getPrototypeOf, context.undefined, fn)
    if (proto.error) {
      keep(proto.error)
      throw new Error('decision sandbox set-up failed')
    }
    prototypes.push(keep(proto.value))
  }
  const blocked = keep(
    context.newConstructorFunction('Function', () => {
      throw new EvalError('code generation from strings is disabled in decision functions')
    }),
  )
  // `x instanceof Function` reads the constructor's prototype, so keep that working.
  context.defineProp(blocked, 'prototype', { value: functionPrototype })
  for (const proto of prototypes) {
    context.defineProp(proto, 'constructor', { value: blocked, configurable: true })
  }
  context.defineProp(global, 'Function', { value: blocked, configurable: true })
  return intrinsics
}
