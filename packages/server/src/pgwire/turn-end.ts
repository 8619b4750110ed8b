/**
 * Socket writes deferred to the end of the event-loop turn. A turn handles many connections'
 * messages; writing all their output together, after the JavaScript that produced it, wakes
 * each reader once with its whole answer and lets the peers (clients, backends) find many
 * sockets ready at once instead of being woken between two pieces of our work.
 */
let due: (() => void)[] = []

function runDue(): void {
  const now = due
  due = []
  for (const write of now) write()
}

/** Runs `write` once this turn's I/O callbacks are handled (setImmediate: the check phase). */
export function atTurnEnd(write: () => void): void {
  if (due.length === 0) setImmediate(runDue)
  due.push(write)
}
