import { setImmediate as nextTurn } from 'node:timers/promises'

/**
 * Cuts `items` into slices of at most `size`. Work over a whole large catalog runs slice by
 * slice, so the thread that serves clients gets a turn between them.
 */
export function slicesOf<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = []
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size))
  return out
}

/** Lets the event loop run what is waiting (I/O, timers) before the next slice of work. */
export function yieldTurn(): Promise<void> {
  return nextTurn()
}

/** Longest a stretch of work taking turns (`turnTaker`) holds the thread. */
const TURN_MS = 8

/**
 * A turn for other work once `ms` of work ran since the last one: `await turn()` in a loop
 * keeps each stretch short whatever an item costs (a table of ten columns or of a thousand)
 * and however busy the machine is.
 */
export function turnTaker(ms = TURN_MS): () => Promise<void> | undefined {
  let since = performance.now()
  return () => {
    if (performance.now() - since < ms) return undefined
    return yieldTurn().then(() => {
      since = performance.now()
    })
  }
}
