import { parse, stringify } from 'yaml'
import type { PolicyBundle } from './bundle-export.js'

export type BundleFormat = 'yaml' | 'json'

/**
 * A bundle as text. Both forms keep the export's order (sorted lists, fixed key order), so the
 * same access model always prints the same bytes and a change shows as a small diff.
 */
export function bundleText(bundle: PolicyBundle, format: BundleFormat): string {
  if (format === 'json') return `${JSON.stringify(bundle, null, 2)}\n`
  return stringify(bundle, { lineWidth: 0, aliasDuplicateObjects: false })
}

/** Reads a bundle file's text: YAML (JSON is YAML too, so either parses). */
export function parseBundleText(text: string): unknown {
  return parse(text)
}
