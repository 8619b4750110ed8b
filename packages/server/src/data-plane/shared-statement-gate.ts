import { SLOT_TTL_MS, type StatementCounters } from '@palisade/store'
import { WireError } from '../wire/wire-error.js'
import {
  CONFIGURATION_LIMIT_EXCEEDED,
  concurrencyRefusal,
  type GatedUser,
  type LeaveStatement,
  rateRefusal,
  type StatementGate,
} from './statement-gate.js'

/**
 * Counts in the store, so every instance on one PostgreSQL store shares them
 * (docs/roles-and-access.md#limits): one store transaction per statement of a user with rate or
 * concurrency limits, none for anyone else. Slots of statements still running here are extended
 * every 10 s; an instance that dies leaves slots that lapse within 30 s.
 */
export class SharedStatementGate implements StatementGate {
  readonly #counters: StatementCounters
  readonly #held = new Set<string>()
  #timer: NodeJS.Timeout | undefined

  constructor(counters: StatementCounters) {
    this.#counters = counters
  }

  async enter(user: GatedUser): Promise<LeaveStatement> {
    const { maxConcurrentStatements: concurrent, maxStatementsPerMinute: perMinute } = user.limits
    let answer: Awaited<ReturnType<StatementCounters['enter']>>
    try {
      answer = await this.#counters.enter(user.id, { concurrent, perMinute })
    } catch {
      throw new WireError({
        severity: 'ERROR',
        code: CONFIGURATION_LIMIT_EXCEEDED,
        message: 'statement limits cannot be checked: the policy store is unavailable',
        hint: 'Retry once Palisade can reach its store again.',
      })
    }
    if (!answer.admitted) {
      throw answer.limit === 'rate'
        ? rateRefusal(perMinute ?? 0, answer.retryMs)
        : concurrencyRefusal(concurrent ?? 0)
    }
    const slotId = answer.slotId
    if (slotId === null) return () => {}
    this.#held.add(slotId)
    this.#keepAlive()
    return () => {
      if (!this.#held.delete(slotId)) return undefined
      // Best effort: a slot that cannot be given back lapses by itself.
      return this.#counters.leave(slotId).catch(() => {})
    }
  }

  #keepAlive(): void {
    if (this.#timer) return
    this.#timer = setInterval(() => {
      if (this.#held.size === 0) {
        clearInterval(this.#timer)
        this.#timer = undefined
      }
      this.#counters.extend([...this.#held]).catch(() => {})
    }, SLOT_TTL_MS / 3)
    this.#timer.unref()
  }
}
