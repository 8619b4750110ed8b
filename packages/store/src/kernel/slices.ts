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
