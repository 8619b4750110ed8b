/**
 * Whether a peer address is this machine: IPv4 127.0.0.0/8, IPv6 `::1`, or IPv4 loopback mapped
 * into IPv6 (`::ffff:127.0.0.1`, how a dual-stack listener reports IPv4 peers).
 */
export function isLoopback(address: string): boolean {
  return address === '::1' || /^(::ffff:)?127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(address)
}
