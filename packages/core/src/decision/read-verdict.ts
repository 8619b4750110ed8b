import type { QuickJSHandle } from 'quickjs-emscripten-core'
import type { SandboxError } from './sandbox-error.js'
import type { SandboxValues } from './sandbox-values.js'

/**
 * Reads what `evaluate` returned (docs/errors.md): a plain object, not an array, whose
 * own data property `fire` is a boolean. An inherited `fire`, a getter, `1`, `"true"` or null
 * are errors. Only captured intrinsics run, so nothing the function defined is called.
 */
export function readVerdict(values: SandboxValues, result: QuickJSHandle): boolean | SandboxError {
  const { context, intrinsics } = values
  const invalid = (why: string): SandboxError => ({ message: `invalid result: ${why}` })
  const type = context.typeof(result)
  if (type !== 'object' || values.isNull(result)) {
    const got = type === 'object' ? 'null' : type
    return invalid(`expected an object with a boolean fire, got ${got}`)
  }
  if (values.isTrue(values.call(intrinsics.isArray, result))) {
    return invalid('expected a plain object, got an array')
  }
  const proto = values.call(intrinsics.getPrototypeOf, result)
  if (!proto || !(context.eq(proto, intrinsics.objectPrototype) || values.isNull(proto))) {
    return invalid('expected a plain object')
  }
  const fire = values.call(intrinsics.getOwnPropertyDescriptor, result, intrinsics.keys.fire)
  if (!fire || context.typeof(fire) !== 'object') return invalid('fire is missing')
  // An accessor (getter) descriptor has no own `value`; a data descriptor always has one.
  if (!values.isTrue(values.callOn(intrinsics.hasOwn, fire, intrinsics.keys.value))) {
    return invalid('fire must be a data property')
  }
  const value = values.call(intrinsics.get, fire, intrinsics.keys.value)
  if (!value || context.typeof(value) !== 'boolean') return invalid('fire must be a boolean')
  return values.isTrue(value)
}
