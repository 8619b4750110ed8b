import { type CompiledSession, compileSession, type SessionInput } from '@palisade/core'
import { contentKey } from './session-content-key.js'

/** Compiled sessions kept for connections still to come (least recently used first out). */
const MAX_KEPT = 32

/**
 * Compiled sessions by the content of their input, all of it but `epoch` (a counter of builds):
 * connections of the same user to the same datasource under the same rules share one, with its
 * rewrite cache and templates, instead of compiling the policies again and rewriting every
 * statement shape anew (docs/pgwire.md#sessions). A different rule, attribute, catalog, grant
 * window or server version is a different input, so it never meets another's session.
 */
export class CompiledSessions {
  readonly #kept = new Map<string, Promise<CompiledSession>>()

  async compile(input: SessionInput): Promise<CompiledSession> {
    const key = await contentKey(input)
    if (key === undefined) return compileSession(input)
    const kept = this.#kept.get(key)
    if (kept) {
      this.#kept.delete(key)
      this.#kept.set(key, kept)
      return kept
    }
    const compiling = compileSession(input)
    this.#kept.set(key, compiling)
    // A failed compile is not kept: the next connection tries again (and hears its own error).
    compiling.catch(() => {
      if (this.#kept.get(key) === compiling) this.#kept.delete(key)
    })
    if (this.#kept.size > MAX_KEPT) this.#kept.delete(this.#kept.keys().next().value as string)
    return compiling
  }
}
