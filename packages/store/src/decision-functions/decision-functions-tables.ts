import { boolean, integer, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core'
import { idColumn, timestamps } from '../kernel/columns.js'

/** Decision functions (docs/decision-functions.md); `artifact` is the compiled sandbox module. */
export const decisionFunctions = pgTable('decision_functions', {
  id: idColumn(),
  name: text('name').notNull().unique(),
  description: text('description'),
  language: text('language').notNull().default('javascript'),
  decisionFn: text('decision_fn').notNull(),
  decisionConfig: jsonb('decision_config').notNull().default({}),
  evaluateContext: text('evaluate_context').notNull(),
  onError: text('on_error').notNull().default('deny'),
  logLevel: text('log_level').notNull().default('off'),
  isEnabled: boolean('is_enabled').notNull().default(true),
  version: integer('version').notNull().default(1),
  artifact: text('artifact'),
  createdBy: uuid('created_by'),
  updatedBy: uuid('updated_by'),
  ...timestamps(),
})
