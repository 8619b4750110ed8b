import { beforeAll, describe, expect, it } from 'vitest'
import {
  deparseStatement,
  expressionFragment,
  statementFragment,
  targetListFragment,
} from './deparse.js'
import type { AstNode } from './node.js'
import { loadParser, parseSql } from './parse.js'

beforeAll(() => loadParser())

const select = (sql: string) =>
  parseSql(sql)[0]?.stmt as { SelectStmt: { targetList: AstNode[]; whereClause: AstNode } }

describe('deparse fragments print exactly what the deparser would', () => {
  it('prints a whole statement fragment as the statement itself', () => {
    const stmt = select("SELECT a, 'x' || b AS c FROM s.t WHERE a = 1 OR b IS NULL OFFSET 0")
    const outer = select('SELECT * FROM (SELECT 1) AS t') as unknown as {
      SelectStmt: { fromClause: { RangeSubselect: { subquery: AstNode } }[] }
    }
    const direct = deparseStatement({
      SelectStmt: {
        ...outer.SelectStmt,
        fromClause: [
          {
            RangeSubselect: {
              ...outer.SelectStmt.fromClause[0]?.RangeSubselect,
              subquery: stmt as AstNode,
            },
          },
        ],
      },
    } as AstNode)
    const memo = deparseStatement({
      SelectStmt: {
        ...outer.SelectStmt,
        fromClause: [
          {
            RangeSubselect: {
              ...outer.SelectStmt.fromClause[0]?.RangeSubselect,
              subquery: statementFragment(stmt as AstNode),
            },
          },
        ],
      },
    } as AstNode)
    expect(memo).toBe(direct)
  })

  it('prints a target list and a parenthesized expression that keeps its precedence', () => {
    const stmt = select('SELECT a, b + 1 AS c FROM t WHERE x = 1 OR y = 2')
    const rebuilt = deparseStatement({
      SelectStmt: {
        ...stmt.SelectStmt,
        targetList: [targetListFragment(stmt.SelectStmt.targetList)],
        whereClause: {
          BoolExpr: {
            boolop: 'AND_EXPR',
            args: [
              expressionFragment(stmt.SelectStmt.whereClause),
              select('SELECT 1 WHERE z = 3').SelectStmt.whereClause,
            ],
          },
        },
      },
    } as AstNode)
    expect(rebuilt).toBe('SELECT a, b + 1 AS c FROM t WHERE (x = 1 OR y = 2) AND z = 3')
  })
})
