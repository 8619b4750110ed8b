/**
 * The reviewed rules that turn PostgreSQL's own catalog (pg_proc, pg_operator, pg_type) into
 * Palisade's allowlists. `scripts/generate-builtins.ts` reads the catalogs of the servers it is
 * pointed at, applies these rules, and writes `builtins.generated.ts`; the runtime reads only
 * the generated file. Change a rule here, regenerate, and review the diff of the generated file.
 *
 * The principle: a built-in function is allowed when it reads nothing but its arguments and the
 * statement clock. A whole category is refused when calling it could read or change something
 * the policies do not govern; every refused name belongs to exactly one category below.
 */

/** Why a built-in is refused: each category is one reviewed reason. */
export const REFUSAL_CATEGORIES = {
  'executes-sql':
    'executes SQL text or reads a table by name, so the policies would not apply to what it reads',
  'server-state':
    'reads files, settings, statistics, large objects or other server and session state',
  writes: 'writes, or changes server, session, sequence or transaction state',
  locks: 'takes locks or holds the session',
  probes:
    'probes object existence, definitions, size or privileges by name or OID, beyond the visible catalog',
  internal:
    'is a support function PostgreSQL calls itself (planner, index, type, trigger, handler)',
} as const

export type RefusalCategory = keyof typeof REFUSAL_CATEGORIES

/** Name patterns per category, matched against the whole function name. */
export const REFUSED_NAME_PATTERNS: Readonly<Record<RefusalCategory, readonly RegExp[]>> = {
  'executes-sql': [
    /^(query|cursor|table|schema|database)_to_xml(schema|_and_xmlschema)?$/,
    /^ts_stat$/,
    /^ts_rewrite$/,
    /^currtid2?$/,
  ],
  'server-state': [
    /^pg_read_(binary_)?file(_old)?$/,
    /^pg_ls_/,
    /^pg_stat_/,
    /^pg_statio_/,
    /^pg_current_logfile$/,
    /^pg_control_/,
    /^pg_(backend_pid|postmaster_start_time|conf_load_time|config|jit_available|trigger_depth)$/,
    /^pg_(backup_start_time|numa_available)$/,
    /^pg_show_/,
    /^pg_settings_get_flags$/,
    /^(current_setting|current_schemas|current_query|getpgusername)$/,
    /^inet_(client|server)_(addr|port)$/,
    /^pg_(listening_channels|notification_queue_usage|prepared_statement|prepared_xact|cursor)$/,
    /^pg_(lock_status|blocking_pids|safe_snapshot_blocking_pids|isolation_test_session_is_blocked)$/,
    /^pg_is_(in_recovery|wal_replay_paused|in_backup)$/,
    /^pg_get_(wal_|backend_memory|shmem|multixact|replication_slots|loaded_modules|wait_events|aios)/,
    /^pg_(last|current)_(wal|xact)_/,
    /^pg_last_committed_xact$/,
    /^pg_wal(file_name|_summary)/,
    /^pg_(available_extension|extension_update_paths)/,
    /^pg_(hba_file_rules|ident_file_mappings)$/,
    /^pg_xact_commit_timestamp/,
    /^(pg_xact_status|txid_status|txid_current_snapshot|pg_current_snapshot)$/,
    /^pg_replication_origin_/,
    /^pg_tablespace_(databases|location)$/,
    /^pg_event_trigger_/,
    /^pg_sequence_(last_value|parameters)$/,
    /^(lo_|loread$|lowrite$)/,
    /^pg_sync_replication_slots$/,
    /^pg_split_walfile_name$/,
    /^pg_available_wal_summaries$/,
  ],
  writes: [
    /^(set_config|setseed|nextval|setval|currval|lastval|pg_notify)$/,
    /^pg_(cancel|terminate)_backend$/,
    /^pg_(reload_conf|rotate_logfile(_old)?|switch_wal|promote|create_restore_point)$/,
    /^pg_(create|drop|copy)_.*replication_slot$/,
    /^pg_replication_slot_advance$/,
    /^pg_logical_/,
    /^pg_(backup_start|backup_stop|start_backup|stop_backup)$/,
    /^pg_wal_replay_/,
    /^pg_import_system_collations$/,
    /^pg_stat_(reset|clear_snapshot|force_next_flush)/,
    /^pg_log_(backend_memory_contexts|standby_snapshot)$/,
    /^pg_export_snapshot$/,
    /^brin_(summarize|desummarize)_/,
    /^gin_clean_pending_list$/,
    /^(pg_nextoid|pg_extension_config_dump|pg_stop_making_pinned_objects)$/,
    /^binary_upgrade_/,
    /^(txid_current|txid_current_if_assigned|pg_current_xact_id|pg_current_xact_id_if_assigned)$/,
    /^pg_(restore|clear)_(relation|attribute)_stats$/,
  ],
  locks: [/^pg_(try_)?advisory_/, /^pg_sleep(_for|_until)?$/],
  probes: [
    /^has_.*_privilege$/,
    /^(pg_has_role|row_security_active)$/,
    /^to_reg/,
    /^(regclass|regtype|regproc|regnamespace|regrole)$/,
    /_is_visible$/,
    /^pg_(is_other_temp_schema|my_temp_schema)$/,
    /^pg_get_/,
    /^(obj|col|shobj)_description$/,
    /^pg_(describe_object|identify_object|identify_object_as_address)$/,
    /^pg_(relation|table|indexes|total_relation|database|tablespace)_size$/,
    /^pg_relation_(filenode|filepath|is_updatable|is_publishable)$/,
    /^pg_filenode_relation$/,
    /^pg_index(am)?_(column_)?has_property$/,
    /^pg_indexam_progress_phasename$/,
    /^pg_column_is_updatable$/,
    /^pg_partition_/,
    /^satisfies_hash_partition$/,
    /^oidvectortypes$/,
    /^format_type$/,
    /^pg_(database_)?collation_actual_version$/,
    /^pg_input_(is_valid|error_info)$/,
    /^pg_basetype$/,
    /^pg_column_toast_chunk_id$/,
    /^postgresql_fdw_validator$/,
  ],
  internal: [/^RI_FKey_/, /^(amvalidate|unique_key_recheck|suppress_redundant_updates_trigger)$/],
}

/**
 * Argument or result types that mark a function as internal support (PostgreSQL will not let
 * SQL produce a value of them) or as a catalog lookup by OID.
 */
export const INTERNAL_TYPES: ReadonlySet<string> = new Set([
  'internal',
  'trigger',
  'event_trigger',
  'language_handler',
  'fdw_handler',
  'index_am_handler',
  'tsm_handler',
  'table_am_handler',
])

/** `reg*` object-identifier types: casting to them probes object existence by name. */
export const REG_TYPES: ReadonlySet<string> = new Set([
  'regclass',
  'regcollation',
  'regconfig',
  'regdictionary',
  'regnamespace',
  'regoper',
  'regoperator',
  'regproc',
  'regprocedure',
  'regrole',
  'regtype',
])

/** OID-family types: a stable or volatile function taking one looks something up in the catalog. */
export const OBJECT_ID_TYPES: ReadonlySet<string> = new Set(['oid', 'oidvector', ...REG_TYPES])

/**
 * Volatile functions reviewed one by one and allowed: they read only the clock or a random
 * source. Every other volatile built-in is refused (most write or read server state).
 */
export const ALLOWED_VOLATILE: ReadonlySet<string> = new Set([
  'array_sample',
  'array_shuffle',
  'clock_timestamp',
  'gen_random_uuid',
  'random',
  'random_normal',
  'timeofday',
  // `timezone(text, timetz)` reads today's date for the offset in some versions.
  'timezone',
  'uuidv4',
  'uuidv7',
])

/** Names a category pattern catches that were reviewed as harmless: pure or public data. */
export const ALLOWED_EXCEPTIONS: ReadonlySet<string> = new Set([
  'pg_get_keywords',
  // Returns the type of its argument's value (a regtype), looking nothing up by name.
  'pg_typeof',
])

/**
 * Names the proxy rewrites to the Palisade identity before the statement reaches the upstream,
 * so the upstream function itself is never called.
 */
export const REWRITTEN_BY_PROXY: ReadonlySet<string> = new Set([
  'current_catalog',
  'current_database',
  'current_role',
  'current_schema',
  'current_user',
  'session_user',
  'user',
  'version',
])

/**
 * Functions of server versions the generator was not pointed at (18), reviewed by hand: pure
 * functions of their arguments. Merged into the allowlist so a newer upstream works too.
 */
export const ALLOWED_SUPPLEMENT: readonly string[] = [
  'array_reverse',
  'array_sort',
  'casefold',
  'uuidv4',
  'uuidv7',
  'uuid_extract_timestamp',
  'uuid_extract_version',
]

/**
 * Names the parser turns into expressions of their own (COALESCE, CURRENT_DATE, ...): not in
 * pg_proc, but a call written with them is SQL syntax and harmless.
 */
export const SQL_SYNTAX_NAMES: readonly string[] = [
  'coalesce',
  'current_date',
  'current_time',
  'current_timestamp',
  'greatest',
  'json_scalar',
  'json_serialize',
  'least',
  'localtime',
  'localtimestamp',
  'nullif',
]

/** Operators and types of newer versions, reviewed the same way. */
export const OPERATOR_SUPPLEMENT: readonly string[] = []

/**
 * Built-in types refused by name: the object-identifier types are handled by their own
 * guard (a name cast to them is checked against the visible catalog), and an array of them
 * would bypass that guard.
 */
export function isRefusedTypeName(name: string): boolean {
  return REG_TYPES.has(name.startsWith('_') ? name.slice(1) : name)
}
