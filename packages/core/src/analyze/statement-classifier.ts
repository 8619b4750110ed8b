import { type AstNode, bodyOf, type Pg, stringsOf, tagOf } from '../ast/node.js'
import { ReadOnlyViolationError, UnsupportedStatementError } from '../errors.js'

/** The statements Palisade accepts (docs/statements.md); anything else is 25006. */
export const StatementKind = {
  Select: 'select',
  Explain: 'explain',
  Show: 'show',
  Transaction: 'transaction',
  DeclareCursor: 'declare_cursor',
  Fetch: 'fetch',
  CloseCursor: 'close_cursor',
  Deallocate: 'deallocate',
  Set: 'set',
} as const
export type StatementKind = (typeof StatementKind)[keyof typeof StatementKind]

/** A classified statement; `query` is the SELECT tree to rewrite, when there is one. */
export interface ClassifiedStatement {
  readonly kind: StatementKind
  /** Spelling for `ctx.query.statement_type` and the audit. */
  readonly statementType: string
  readonly query: AstNode | undefined
}

/** Presentation parameters drivers set; they cannot change which rows or columns are read. */
const SETTABLE = new Set([
  'application_name',
  'extra_float_digits',
  'client_encoding',
  'client_min_messages',
])

/**
 * Classifies one parsed statement against the read-only allowlist. Writes, DDL, COPY, DO,
 * CALL, LISTEN, LOCK, SQL-level PREPARE/EXECUTE and other SETs throw `ReadOnlyViolationError`.
 */
export function classifyStatement(stmt: AstNode): ClassifiedStatement {
  const tag = tagOf(stmt)
  switch (tag) {
    case 'SelectStmt':
      return { kind: StatementKind.Select, statementType: 'SELECT', query: stmt }
    case 'ExplainStmt':
      return classifyExplain(bodyOf<Pg.ExplainStmt>(stmt, tag) as Pg.ExplainStmt)
    case 'VariableShowStmt':
      return { kind: StatementKind.Show, statementType: 'SHOW', query: undefined }
    case 'TransactionStmt':
      return classifyTransaction(bodyOf<Pg.TransactionStmt>(stmt, tag) as Pg.TransactionStmt)
    case 'DeclareCursorStmt': {
      const query = bodyOf<Pg.DeclareCursorStmt>(stmt, tag)?.query as AstNode | undefined
      if (tagOf(query) !== 'SelectStmt') throw new ReadOnlyViolationError()
      return { kind: StatementKind.DeclareCursor, statementType: 'DECLARE CURSOR', query }
    }
    case 'FetchStmt': {
      const move = bodyOf<Pg.FetchStmt>(stmt, tag)?.ismove === true
      return { kind: StatementKind.Fetch, statementType: move ? 'MOVE' : 'FETCH', query: undefined }
    }
    case 'ClosePortalStmt':
      return { kind: StatementKind.CloseCursor, statementType: 'CLOSE CURSOR', query: undefined }
    case 'DeallocateStmt':
      return { kind: StatementKind.Deallocate, statementType: 'DEALLOCATE', query: undefined }
    case 'VariableSetStmt':
      checkSet(bodyOf<Pg.VariableSetStmt>(stmt, tag) as Pg.VariableSetStmt)
      return { kind: StatementKind.Set, statementType: 'SET', query: undefined }
    default:
      throw new ReadOnlyViolationError()
  }
}

function classifyExplain(explain: Pg.ExplainStmt): ClassifiedStatement {
  const query = explain.query as AstNode | undefined
  if (tagOf(query) !== 'SelectStmt') throw new ReadOnlyViolationError()
  for (const option of explain.options ?? []) {
    const def = bodyOf<Pg.DefElem>(option, 'DefElem')
    if (def?.defname === 'analyze' && isTrueOption(def.arg as AstNode | undefined)) {
      // Row counts of EXPLAIN ANALYZE report rows a row filter removed.
      throw new UnsupportedStatementError('EXPLAIN ANALYZE')
    }
  }
  return { kind: StatementKind.Explain, statementType: 'EXPLAIN', query }
}

/** Whether a boolean statement option (`VERBOSE`, `VERBOSE off`, `COSTS 0`) is on. */
export function isTrueOption(arg: AstNode | undefined): boolean {
  if (arg === undefined) return true
  const text = bodyOf<Pg.String>(arg, 'String')?.sval
  if (text !== undefined) return !['false', 'off', '0', 'no'].includes(text.toLowerCase())
  const c = bodyOf<Pg.A_Const>(arg, 'A_Const')
  if (c?.ival !== undefined) return (c.ival.ival ?? 0) !== 0
  if (c?.boolval !== undefined) return c.boolval.boolval === true
  if (c?.sval !== undefined)
    return !['false', 'off', '0', 'no'].includes((c.sval.sval ?? '').toLowerCase())
  return true
}

function classifyTransaction(tx: Pg.TransactionStmt): ClassifiedStatement {
  switch (tx.kind) {
    case 'TRANS_STMT_BEGIN':
    case 'TRANS_STMT_START':
      for (const option of tx.options ?? []) {
        const def = bodyOf<Pg.DefElem>(option, 'DefElem')
        if (
          def?.defname === 'transaction_read_only' &&
          !isTrueOption(def.arg as AstNode | undefined)
        ) {
          throw new ReadOnlyViolationError()
        }
      }
      return { kind: StatementKind.Transaction, statementType: 'BEGIN', query: undefined }
    case 'TRANS_STMT_COMMIT':
    case 'TRANS_STMT_ROLLBACK':
    case 'TRANS_STMT_SAVEPOINT':
    case 'TRANS_STMT_RELEASE':
    case 'TRANS_STMT_ROLLBACK_TO':
      // AND CHAIN starts the next transaction with the characteristics of the one it ends:
      // every transaction block here began READ ONLY, so the chained one is READ ONLY too.
      return {
        kind: StatementKind.Transaction,
        statementType: tx.kind.slice(11).replace('_', ' '),
        query: undefined,
      }
    default:
      // PREPARE TRANSACTION, COMMIT/ROLLBACK PREPARED.
      throw new ReadOnlyViolationError()
  }
}

function checkSet(set: Pg.VariableSetStmt): void {
  const name = (set.name ?? '').toLowerCase()
  if (set.is_local || !SETTABLE.has(name)) throw new ReadOnlyViolationError()
  if (set.kind !== 'VAR_SET_VALUE' && set.kind !== 'VAR_SET_DEFAULT' && set.kind !== 'VAR_RESET') {
    throw new ReadOnlyViolationError()
  }
  if (set.kind !== 'VAR_SET_VALUE') return
  const value = constantText(set.args)
  if (name === 'client_encoding' && !['utf8', 'utf-8', 'unicode'].includes(value.toLowerCase())) {
    throw new ReadOnlyViolationError()
  }
  if (name === 'extra_float_digits' && !['1', '2', '3'].includes(value))
    throw new ReadOnlyViolationError()
}

function constantText(args: readonly unknown[] | undefined): string {
  if ((args?.length ?? 0) !== 1) return ''
  const c = bodyOf<Pg.A_Const>(args?.[0], 'A_Const')
  if (c?.sval !== undefined) return c.sval.sval ?? ''
  if (c?.ival !== undefined) return String(c.ival.ival ?? 0)
  return stringsOf(args).join('')
}
