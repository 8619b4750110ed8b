import type { ObjectTags, TagProposal } from '@palisade/store'
import * as v from 'valibot'
import type { ClassificationResult } from '../../classification/classify.js'
import { answerOf, id, instant, nullableInstant, nullableString } from './answer-of.js'

/** The tags of one table (`column_name` null) or column. */
export const objectTagsAnswer = answerOf<ObjectTags>()(
  v.strictObject({
    schema_name: v.string(),
    table_name: v.string(),
    column_name: nullableString,
    tags: v.array(v.string()),
  }),
)

export const objectTagsListAnswer = v.array(objectTagsAnswer)

/** A classification proposal, pending or decided. */
export const tagProposalAnswer = answerOf<TagProposal>()(
  v.strictObject({
    id,
    datasource_id: id,
    schema_name: v.string(),
    table_name: v.string(),
    column_name: v.string(),
    tag: v.string(),
    confidence: v.number(),
    evidence: v.string(),
    status: v.picklist(['pending', 'accepted', 'rejected']),
    decided_by: v.nullable(id),
    decided_at: nullableInstant,
    created_at: instant,
  }),
)

export const tagProposalListAnswer = v.array(tagProposalAnswer)

/** `POST /datasources/{id}/classify`: the new proposals and what was read. */
export const classificationAnswer = answerOf<ClassificationResult>()(
  v.strictObject({
    proposals: v.array(tagProposalAnswer),
    scanned_columns: v.number(),
    sampled: v.boolean(),
  }),
)
