type Core = typeof import('@palisade/core')

let loading: Promise<Core> | undefined

/**
 * Loads `@palisade/core` and its parser and sandbox once per process, on first use, so that
 * opening a store does not pay for WebAssembly it may never need.
 */
export function ensureCore(): Promise<Core> {
  loading ??= import('@palisade/core')
    .then(async (core) => {
      await core.loadCore()
      return core
    })
    .catch((error: unknown) => {
      // Let a later call try again instead of caching the failure forever.
      loading = undefined
      throw error
    })
  return loading
}
