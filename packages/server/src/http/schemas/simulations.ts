import * as v from 'valibot'
import { dateTime } from './audit.js'
import { idList, intRange, jsonObject, optionalBoolean, uuid } from './common.js'

const objects = (max: number) =>
  v.pipe(v.array(jsonObject, 'expected an array of objects'), v.maxLength(max, `at most ${max}`))

/** Body of `POST /simulations` (docs/preview-and-simulation.md). */
export const simulationBody = v.object({
  datasource_id: v.nullish(uuid),
  datasource_name: v.nullish(
    v.pipe(v.string('expected a string'), v.maxLength(200, 'is too long')),
  ),
  changes: v.object({
    create_policies: v.optional(objects(100)),
    update_policies: v.optional(objects(100)),
    delete_policies: v.optional(idList(100)),
    assign: v.optional(objects(100)),
    unassign: v.optional(idList(100)),
  }),
  window: v.optional(
    v.object({
      user_ids: v.optional(idList(1000, 1)),
      from: v.optional(dateTime),
      to: v.optional(dateTime),
      max_queries: v.optional(intRange(1, 1000)),
    }),
  ),
  execute: optionalBoolean,
  max_rows: v.optional(intRange(1, 100_000)),
})
