import * as v from 'valibot'
import { BUNDLE_VERSION, type PolicyBundle } from '../../policy-as-code/bundle-export.js'
import type { BundlePlan } from '../../policy-as-code/bundle-plan.js'
import { answerOf } from './answer-of.js'
import { limitsAnswer } from './limits-answers.js'

/** `POST /policy-bundles`: the steps applied (or, with `dry_run`, planned) and their counts. */
export const bundlePlanAnswer = answerOf<BundlePlan>()(
  v.strictObject({
    dry_run: v.boolean(),
    steps: v.array(
      v.strictObject({
        action: v.picklist(['create', 'update', 'delete', 'conflict']),
        kind: v.picklist([
          'attribute_definition',
          'user',
          'role',
          'decision_function',
          'policy',
          'datasource',
          'datasource_access',
          'role_member',
          'role_parent',
          'assignment',
          'catalog_tag',
          'identity_provider',
        ]),
        name: v.string(),
        fields: v.optional(v.array(v.string())),
      }),
    ),
    summary: v.strictObject({
      create: v.number(),
      update: v.number(),
      delete: v.number(),
      conflict: v.number(),
    }),
  }),
)

const nullableString = v.nullable(v.string())
const names = v.array(v.string())
const window = v.strictObject({
  valid_from: v.optional(nullableString),
  valid_until: v.optional(nullableString),
})
const windows = v.record(v.string(), window)

/** `GET /policy-bundles`: the access model as a bundle (the YAML form holds the same). */
export const policyBundleAnswer = answerOf<PolicyBundle>()(
  v.strictObject({
    version: v.literal(BUNDLE_VERSION),
    attribute_definitions: v.array(
      v.strictObject({
        key: v.string(),
        entity_type: v.string(),
        value_type: v.string(),
        display_name: v.string(),
        default_value: v.unknown(),
        allowed_values: v.nullable(v.array(v.unknown())),
        description: nullableString,
      }),
    ),
    users: v.array(
      v.strictObject({
        username: v.string(),
        is_active: v.boolean(),
        email: nullableString,
        display_name: nullableString,
        attributes: v.record(v.string(), v.unknown()),
        limits: v.optional(limitsAnswer),
      }),
    ),
    roles: v.array(
      v.strictObject({
        name: v.string(),
        description: nullableString,
        is_active: v.boolean(),
        members: names,
        member_windows: v.optional(windows),
        parents: names,
        limits: v.optional(limitsAnswer),
      }),
    ),
    decision_functions: v.array(
      v.strictObject({
        name: v.string(),
        description: nullableString,
        language: v.string(),
        evaluate_context: v.string(),
        on_error: v.string(),
        log_level: v.string(),
        is_enabled: v.boolean(),
        decision_config: v.unknown(),
        source: v.string(),
        version: v.optional(v.number()),
      }),
    ),
    policies: v.array(
      v.strictObject({
        name: v.string(),
        description: nullableString,
        policy_type: v.string(),
        targets: v.array(v.unknown()),
        filter_expression: nullableString,
        mask_expression: nullableString,
        min_group_size: v.optional(v.number()),
        allowed_aggregates: v.optional(v.array(v.string())),
        decision_function: nullableString,
        is_enabled: v.boolean(),
        enforcement: v.picklist(['enforce', 'shadow']),
        version: v.optional(v.number()),
      }),
    ),
    datasources: v.array(
      v.strictObject({
        name: v.string(),
        ds_type: v.string(),
        access_mode: v.string(),
        is_active: v.boolean(),
        statement_timeout_ms: v.number(),
        pool_size: v.number(),
        pool_mode: nullableString,
        config: v.record(v.string(), v.unknown()),
        access: v.strictObject({
          all: v.boolean(),
          users: names,
          roles: names,
          windows: v.optional(
            v.strictObject({ users: v.optional(windows), roles: v.optional(windows) }),
          ),
        }),
        assignments: v.array(
          v.strictObject({
            policy: v.string(),
            scope: v.picklist(['all', 'user', 'role']),
            user: nullableString,
            role: nullableString,
            priority: v.number(),
            valid_from: v.optional(nullableString),
            valid_until: v.optional(nullableString),
          }),
        ),
        tags: v.optional(
          v.array(
            v.strictObject({
              schema: v.string(),
              table: v.string(),
              column: nullableString,
              tags: names,
            }),
          ),
        ),
      }),
    ),
    identity_providers: v.array(
      v.strictObject({
        name: v.string(),
        issuer: v.string(),
        client_id: v.string(),
        audiences: names,
        username_claim: nullableString,
        role_claim: v.string(),
        attribute_mappings: v.array(v.strictObject({ claim: v.string(), attribute: v.string() })),
        role_mappings: v.array(v.strictObject({ value: v.string(), role: v.string() })),
        jit_users: v.boolean(),
        is_active: v.boolean(),
        console_sign_in: v.boolean(),
        admin_claim: v.nullable(v.strictObject({ claim: v.string(), value: v.string() })),
      }),
    ),
  }),
)
