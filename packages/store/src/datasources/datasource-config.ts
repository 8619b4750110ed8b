import * as v from 'valibot'
import { ValidationError } from '../kernel/errors.js'
import { boundedString, detailsOf, isPlainObject } from '../kernel/validation.js'

/** Datasource kinds (docs/resources.md#datasources). */
export const DS_TYPES = ['postgres', 'pglite'] as const
/** One of the datasource types. */
export type DsType = (typeof DS_TYPES)[number]

/** TLS to the upstream, as libpq spells it (docs/admin-api.md, datasources). */
export const SSL_MODES = ['disable', 'prefer', 'require', 'verify-ca', 'verify-full'] as const
/** One of the TLS modes. */
export type SslMode = (typeof SSL_MODES)[number]

const configSchemas = {
  postgres: v.object({
    host: boundedString(1, 255),
    port: v.optional(
      v.pipe(
        v.number('expected an integer'),
        v.integer('expected an integer'),
        v.minValue(1, 'must be 1-65535'),
        v.maxValue(65535, 'must be 1-65535'),
      ),
      5432,
    ),
    database: boundedString(1, 63),
    username: boundedString(1, 63),
    password: v.nullish(boundedString(0, 1024)),
    sslmode: v.optional(v.picklist(SSL_MODES, 'unknown sslmode'), 'prefer'),
    sslrootcert: v.nullish(v.string('expected a string')),
  }),
  pglite: v.object({
    data_dir: v.nullish(v.string('expected a string'), null),
    init_sql: v.nullish(v.string('expected a string'), null),
  }),
} as const

/** A stored `postgres` config with its password opened: how to reach the upstream. */
export type PostgresDatasourceConfig = v.InferOutput<(typeof configSchemas)['postgres']>
/** A stored `pglite` config. */
export type PgliteDatasourceConfig = v.InferOutput<(typeof configSchemas)['pglite']>

/** Describes the config fields of each type for `GET /datasource-types` (docs/resources.md#datasources). */
export const DATASOURCE_TYPES = [
  {
    ds_type: 'postgres',
    label: 'PostgreSQL',
    fields: [
      {
        key: 'host',
        label: 'Host',
        field_type: 'text',
        required: true,
        is_secret: false,
        default_value: null,
      },
      {
        key: 'port',
        label: 'Port',
        field_type: 'number',
        required: false,
        is_secret: false,
        default_value: 5432,
      },
      {
        key: 'database',
        label: 'Database',
        field_type: 'text',
        required: true,
        is_secret: false,
        default_value: null,
      },
      {
        key: 'username',
        label: 'Username',
        field_type: 'text',
        required: true,
        is_secret: false,
        default_value: null,
      },
      {
        key: 'password',
        label: 'Password',
        field_type: 'text',
        required: false,
        is_secret: true,
        default_value: null,
      },
      {
        key: 'sslmode',
        label: 'SSL mode',
        field_type: 'select',
        required: false,
        is_secret: false,
        default_value: 'prefer',
        options: [...SSL_MODES],
      },
      {
        key: 'sslrootcert',
        label: 'Root certificate (PEM)',
        field_type: 'textarea',
        required: false,
        is_secret: false,
        default_value: null,
      },
    ],
  },
  {
    ds_type: 'pglite',
    label: 'PGlite (embedded)',
    fields: [
      {
        key: 'data_dir',
        label: 'Data directory',
        field_type: 'text',
        required: false,
        is_secret: false,
        default_value: null,
      },
      {
        key: 'init_sql',
        label: 'Init SQL',
        field_type: 'textarea',
        required: false,
        is_secret: false,
        default_value: null,
      },
    ],
  },
] as const

/**
 * Validates a config for its type. Returns the non-secret settings and the password input:
 * `undefined` (keep), `null` (remove) or a string (replace; `""` also keeps, docs/resources.md#datasources).
 */
export function parseConfig(
  dsType: DsType,
  input: unknown,
): { settings: Record<string, unknown>; password: string | null | undefined } {
  if (!isPlainObject(input)) {
    throw new ValidationError([
      { field: 'config', code: 'invalid_type', message: 'expected an object' },
    ])
  }
  const result = v.safeParse(configSchemas[dsType], input, { abortEarly: false })
  if (!result.success) throw new ValidationError(detailsOf(result.issues, 'config'))
  const { password, ...settings } = result.output as Record<string, unknown>
  const pw = password === '' ? undefined : (password as string | null | undefined)
  if (dsType === 'postgres' && settings['sslrootcert'] == null) delete settings['sslrootcert']
  return { settings, password: 'password' in input ? pw : undefined }
}
