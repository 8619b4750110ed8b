import { parameterStatus } from './backend-messages.js'

/** Upstream parameters relayed as-is: they describe how the upstream formats values. */
const RELAYED = [
  'server_version',
  'server_encoding',
  'DateStyle',
  'IntervalStyle',
  'TimeZone',
  'integer_datetimes',
  'standard_conforming_strings',
] as const

/** Values used when the upstream did not report a parameter (PGlite reports none). */
const DEFAULTS: Readonly<Record<(typeof RELAYED)[number], string>> = {
  server_version: '16.0',
  server_encoding: 'UTF8',
  DateStyle: 'ISO, MDY',
  IntervalStyle: 'postgres',
  TimeZone: 'UTC',
  integer_datetimes: 'on',
  standard_conforming_strings: 'on',
}

/**
 * The ParameterStatus set sent after AuthenticationOk. Drivers (pgjdbc, npgsql, asyncpg) expect
 * more than a lone `server_version`; identity parameters name the Palisade user.
 */
export function initialParameterStatus(
  upstream: ReadonlyMap<string, string>,
  client: { username: string; applicationName: string },
): Buffer[] {
  const out = RELAYED.map((name) => parameterStatus(name, upstream.get(name) ?? DEFAULTS[name]))
  out.push(parameterStatus('client_encoding', 'UTF8'))
  out.push(parameterStatus('application_name', client.applicationName))
  out.push(parameterStatus('is_superuser', 'off'))
  out.push(parameterStatus('session_authorization', client.username))
  return out
}
