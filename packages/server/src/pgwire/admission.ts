import type { Socket } from 'node:net'

/** A login that did not finish: timed out, or dropped for a newer pending connection. */
export interface LoginEvent {
  readonly event: 'login_timeout' | 'login_dropped'
  /** The client's address. */
  readonly address: string | undefined
}

/** Limits of connections that have not authenticated yet, and of authenticated sessions. */
export interface AdmissionLimits {
  /** Authenticated sessions at once; one more gets FATAL 53300 after authenticating. */
  readonly maxConnections: number
  /** Connections still in start-up, TLS or authentication, in all. */
  readonly maxPendingConnections: number
  /** The same, per source address. */
  readonly maxPendingPerAddress: number
}

/**
 * Who may take a place: connections not yet authenticated are kept apart from sessions, so
 * silent or stalled sockets never take a session's slot. When the pending places are full (in
 * all, or for one source address), the OLDEST pending connection is dropped to make room: a
 * real client completes its handshake in milliseconds, so a flood of idle sockets cannot keep
 * it out.
 */
export class Admission {
  readonly #limits: AdmissionLimits
  /** Pending connections and their source address, in arrival order (maps keep it). */
  readonly #pending = new Map<Socket, string>()
  readonly #byAddress = new Map<string, Set<Socket>>()
  #sessions = 0

  constructor(limits: AdmissionLimits) {
    this.#limits = limits
  }

  /** A new connection; returns the pending one it pushes out, if any (the caller closes it). */
  arrive(socket: Socket): Socket | undefined {
    const address = socket.remoteAddress ?? ''
    const sameAddress = this.#byAddress.get(address)
    const evicted =
      sameAddress && sameAddress.size >= this.#limits.maxPendingPerAddress
        ? sameAddress.values().next().value
        : this.#pending.size >= this.#limits.maxPendingConnections
          ? this.#pending.keys().next().value
          : undefined
    if (evicted) this.leave(evicted)
    this.#pending.set(socket, address)
    let group = this.#byAddress.get(address)
    if (!group) {
      group = new Set()
      this.#byAddress.set(address, group)
    }
    group.add(socket)
    return evicted
  }

  /** Whether the connection is still pending (not authenticated, not gone). */
  isPending(socket: Socket): boolean {
    return this.#pending.has(socket)
  }

  /** The connection authenticated: takes a session slot, or returns false when none is free. */
  authenticate(socket: Socket): boolean {
    this.leave(socket)
    if (this.#sessions >= this.#limits.maxConnections) return false
    this.#sessions++
    return true
  }

  /** The session ended. */
  endSession(): void {
    this.#sessions = Math.max(0, this.#sessions - 1)
  }

  /** The connection left the pending places (authenticated, closed or evicted). */
  leave(socket: Socket): void {
    const address = this.#pending.get(socket)
    if (address === undefined) return
    this.#pending.delete(socket)
    const group = this.#byAddress.get(address)
    group?.delete(socket)
    if (group?.size === 0) this.#byAddress.delete(address)
  }
}
