import * as v from 'valibot'
import { ValidationError } from '../kernel/errors.js'

/** Longest access a request may ask for or an approval may give: 90 days. */
export const MAX_REQUEST_SECONDS = 90 * 24 * 3600

export const duration = v.pipe(
  v.number('expected an integer'),
  v.integer('expected an integer'),
  v.minValue(60, 'must be at least 60 seconds'),
  v.maxValue(MAX_REQUEST_SECONDS, `must be at most ${MAX_REQUEST_SECONDS} seconds (90 days)`),
)

/** `duration` may be an ISO 8601 duration (`PT8H`, `P1DT12H`, `P2W`) or seconds. */
export const durationAlias = v.optional(
  v.union([v.number(), v.string()], 'expected seconds or an ISO 8601 duration'),
)

const ISO_DURATION = /^P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$/

/** Seconds of an ISO 8601 duration without years or months (their length varies), or null. */
export function isoDurationSeconds(text: string): number | null {
  const m = ISO_DURATION.exec(text.trim().toUpperCase())
  if (!m || text.trim().toUpperCase() === 'P' || /T$/.test(text.trim())) return null
  const [w, d, h, min, sec] = m.slice(1).map((x) => Number(x ?? 0))
  return (w ?? 0) * 604_800 + (d ?? 0) * 86_400 + (h ?? 0) * 3600 + (min ?? 0) * 60 + (sec ?? 0)
}

/**
 * The requested seconds from `duration_seconds` or its `duration` spelling (both: they must
 * agree); `required` makes a missing one a 422. Checked against the same 60 s to 90 days.
 */
export function durationOf(
  body: { duration_seconds?: number | undefined; duration?: number | string | undefined },
  required: boolean,
): number | undefined {
  const alias =
    body.duration === undefined
      ? undefined
      : typeof body.duration === 'number'
        ? body.duration
        : isoDurationSeconds(body.duration)
  const problem = (message: string) =>
    new ValidationError([{ field: 'duration', code: 'invalid_type', message }])
  if (alias === null) throw problem('duration is not an ISO 8601 duration like PT8H or P1D')
  if (
    alias !== undefined &&
    body.duration_seconds !== undefined &&
    alias !== body.duration_seconds
  ) {
    throw problem('duration and duration_seconds differ')
  }
  const seconds = body.duration_seconds ?? alias
  if (seconds === undefined) {
    if (!required) return undefined
    throw new ValidationError([
      { field: 'duration_seconds', code: 'required', message: 'duration_seconds is required' },
    ])
  }
  const checked = v.safeParse(duration, seconds)
  if (!checked.success) {
    throw new ValidationError([
      { field: 'duration_seconds', code: 'out_of_range', message: checked.issues[0].message },
    ])
  }
  return checked.output
}
