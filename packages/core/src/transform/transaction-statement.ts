import { deparseStatement } from '../ast/deparse.js'
import { type AstNode, bodyOf, numberConst, type Pg } from '../ast/node.js'

/** `BEGIN` / `START TRANSACTION` always run READ ONLY upstream (docs/statements.md). */
export function forceReadOnly(stmt: AstNode): AstNode {
  const tx = bodyOf<Pg.TransactionStmt>(stmt, 'TransactionStmt')
  if (!tx || (tx.kind !== 'TRANS_STMT_BEGIN' && tx.kind !== 'TRANS_STMT_START')) return stmt
  const options = (tx.options ?? []).filter(
    (o) => bodyOf<Pg.DefElem>(o, 'DefElem')?.defname !== 'transaction_read_only',
  )
  const readOnly = {
    DefElem: { defname: 'transaction_read_only', arg: numberConst(1), defaction: 'DEFELEM_UNSPEC' },
  }
  return { TransactionStmt: { ...tx, options: [...options, readOnly] } } as AstNode
}

/**
 * The SQL of a transaction statement: BEGIN forced READ ONLY, and `AND CHAIN` kept on COMMIT and
 * ROLLBACK (the deparser drops it).
 */
export function transactionSql(stmt: AstNode): string {
  const sql = deparseStatement(forceReadOnly(stmt))
  const tx = bodyOf<Pg.TransactionStmt>(stmt, 'TransactionStmt')
  const chains = tx?.chain && (tx.kind === 'TRANS_STMT_COMMIT' || tx.kind === 'TRANS_STMT_ROLLBACK')
  return chains && !/\bAND\s+CHAIN$/i.test(sql) ? `${sql} AND CHAIN` : sql
}
