import { jsonb, pgTable, text, unique, uuid } from 'drizzle-orm/pg-core'
import { idColumn, timestamps } from '../kernel/columns.js'

/** Attribute definitions (docs/resources.md#attribute-definitions); only `entity_type` user has a runtime effect. */
export const attributeDefinitions = pgTable(
  'attribute_definitions',
  {
    id: idColumn(),
    key: text('key').notNull(),
    entityType: text('entity_type').notNull(),
    displayName: text('display_name').notNull(),
    valueType: text('value_type').notNull(),
    defaultValue: jsonb('default_value'),
    allowedValues: jsonb('allowed_values').$type<unknown[]>(),
    description: text('description'),
    createdBy: uuid('created_by'),
    updatedBy: uuid('updated_by'),
    ...timestamps(),
  },
  (t) => [unique('attribute_definitions_key_uq').on(t.key, t.entityType)],
)
