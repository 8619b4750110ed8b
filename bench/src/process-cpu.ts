import { readFileSync } from 'node:fs'

/** user + system CPU time from a /proc `stat` file (Linux), in microseconds; NaN without it. */
function statCpuMicros(path: string): number {
  try {
    const fields = readFileSync(path, 'utf8').split(') ')[1]?.split(' ') ?? []
    const ticks = Number(fields[11]) + Number(fields[12])
    // /proc counts in clock ticks of 10 ms (USER_HZ 100 on Linux).
    return ticks * 10_000
  } catch {
    return Number.NaN
  }
}

/** A process's user + system CPU time from /proc (Linux), all its threads, in microseconds. */
export function cpuMicrosOf(pid: number | undefined): number {
  return statCpuMicros(`/proc/${pid}/stat`)
}

/**
 * The CPU time of a process's main thread alone (its thread id is the pid), in microseconds: in
 * a Node.js process, the event loop that serves every connection, without the worker threads
 * (the embedded store's, rewrite workers, libuv's pool) and V8's helper threads.
 */
export function mainThreadCpuMicrosOf(pid: number | undefined): number {
  return statCpuMicros(`/proc/${pid}/task/${pid}/stat`)
}

/** A process's resident memory now (VmRSS), in bytes; `missing` without /proc or the process. */
export function rssBytesOf(pid: number | undefined, missing = Number.NaN): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1]
    return kb === undefined ? missing : Number(kb) * 1024
  } catch {
    return missing
  }
}
