import * as v from 'valibot'
import { intRange, optionalBoolean, text, uuid } from './common.js'

/** Body of `POST /preview` (docs/preview-and-simulation.md): one of each pair names the user and the datasource. */
export const previewBody = v.object({
  user_id: v.nullish(uuid),
  username: v.nullish(text(1, 200)),
  datasource_id: v.nullish(uuid),
  datasource_name: v.nullish(text(1, 200)),
  sql: v.pipe(
    v.string('expected a string'),
    v.check((s) => s.trim() !== '', 'must not be blank'),
    v.check((s) => Buffer.byteLength(s) <= 1_048_576, 'must be at most 1 MiB'),
  ),
  execute: optionalBoolean,
  limit: v.nullish(intRange(1, 1000)),
})
