import { readFileSync } from 'node:fs'

/** A process's user + system CPU time from /proc (Linux), in microseconds. */
export function cpuMicrosOf(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? []
    const ticks = Number(fields[11]) + Number(fields[12])
    // /proc counts in clock ticks of 10 ms (USER_HZ 100 on Linux).
    return ticks * 10_000
  } catch {
    return Number.NaN
  }
}
