import { createHash } from 'node:crypto'

// The source shares line 1 with the header, so line numbers in errors match the user's source.
const HEAD = "(function () { 'use strict'; "
const TAIL = "\n;return typeof evaluate === 'function' ? evaluate : undefined\n})"
const SEAL = '\n//# palisade-decision-module v1 sha256='

/**
 * Wraps a decision-function source in a strict-mode function that runs the top level and
 * returns `evaluate`. Callers must first check that the source parses on its own as a strict
 * script, which rules out text that closes the wrapper early.
 */
export function wrapDecisionSource(source: string): string {
  return `${HEAD}${source}${TAIL}`
}

/** Seals a wrapped body into the stored artifact: the body plus a checksum line. */
export function sealArtifact(body: string): string {
  return `${body}${SEAL}${checksum(body)}`
}

/** Returns the body of an artifact made by `sealArtifact`, or undefined if it is corrupt. */
export function openArtifact(artifact: string): string | undefined {
  const at = artifact.lastIndexOf(SEAL)
  if (at < 0) return undefined
  const body = artifact.slice(0, at)
  if (!body.startsWith(HEAD) || !body.endsWith(TAIL)) return undefined
  return artifact.slice(at + SEAL.length) === checksum(body) ? body : undefined
}

function checksum(body: string): string {
  return createHash('sha256').update(body).digest('hex')
}
