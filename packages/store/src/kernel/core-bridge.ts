type Core = typeof import('@palisade/core')

let parser: Promise<Core> | undefined
let full: Promise<Core> | undefined

/**
 * Loads `@palisade/core` with its parser once per process, on first use, so that opening a store
 * does not pay for WebAssembly it may never need. Enough for policy and expression validation.
 */
export function ensureParser(): Promise<Core> {
  parser ??= retryable(
    import('@palisade/core').then(async (core) => {
      await core.loadParser()
      return core
    }),
    () => {
      parser = undefined
    },
  )
  return parser
}

/** Loads core with the decision-function sandbox as well (its worker threads), for compiling. */
export function ensureCore(): Promise<Core> {
  full ??= retryable(
    import('@palisade/core').then(async (core) => {
      await core.loadCore()
      return core
    }),
    () => {
      full = undefined
    },
  )
  return full
}

/** Lets a later call try again instead of caching a failure forever. */
function retryable(loading: Promise<Core>, forget: () => void): Promise<Core> {
  return loading.catch((error: unknown) => {
    forget()
    throw error
  })
}
