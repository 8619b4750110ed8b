import {
  DECISION_FUEL_LIMIT,
  DECISION_TIME_LIMIT_MS,
  FUEL_PER_INTERRUPT,
} from './decision-limits.js'

/** Which limit stopped an evaluation. */
export type ExceededLimit = 'fuel' | 'time'

/**
 * Counts fuel through QuickJS's interrupt handler and enforces the wall-clock backstop.
 * Once a limit is hit every later call interrupts again, so a `catch` or `finally` in the
 * sandbox cannot keep running.
 */
export class FuelMeter {
  #calls = 0
  #exceeded: ExceededLimit | undefined
  #deadline = Number.POSITIVE_INFINITY

  /** Starts the wall clock; called once the code is parsed, so only running time counts. */
  startClock(timeLimitMs = DECISION_TIME_LIMIT_MS): void {
    this.#deadline = performance.now() + timeLimitMs
  }

  /** The interrupt handler: returning true makes QuickJS throw an uncatchable "interrupted". */
  readonly interrupt = (): boolean => {
    if (this.#exceeded) return true
    this.#calls++
    if (this.#used() > DECISION_FUEL_LIMIT) this.#exceeded = 'fuel'
    else if (performance.now() > this.#deadline) this.#exceeded = 'time'
    return this.#exceeded !== undefined
  }

  /** Fuel used so far (a multiple of 10,000), never more than the limit. */
  get fuelConsumed(): number {
    return Math.min(this.#used(), DECISION_FUEL_LIMIT)
  }

  get exceeded(): ExceededLimit | undefined {
    return this.#exceeded
  }

  // A fresh context polls at its first step, which the sandbox's own set-up takes (before
  // this handler is installed); after that QuickJS calls the handler every 10,000 steps.
  #used(): number {
    return this.#calls * FUEL_PER_INTERRUPT
  }
}
