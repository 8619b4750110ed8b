import { Deparser } from 'pgsql-deparser'
import { SqlFormatter } from 'pgsql-deparser/utils/sql-formatter.js'
// Not re-exported by the package's entry point; the class is plain data plus `spawn`.
import { DeparserContext } from 'pgsql-deparser/visitors/base.js'
import { isStackOverflow, PalisadeError, StackDepthError } from '../errors.js'
import { SqlState } from '../sqlstate.js'
import type { AstNode, Pg } from './node.js'
import { nodeBody } from './tag-dispatch.js'

/**
 * The deparser, taught one extra node: a fragment that holds the deparsed text of a subtree
 * Palisade built itself (a scan's select list or row filter), so that text is produced once
 * per session instead of once per query. Fragments only ever hold output of this deparser for
 * trees the rewriter constructed; client text never becomes a fragment.
 */
class FragmentDeparser extends Deparser {
  PalisadeFragment(node: { sql: string }): string {
    return node.sql
  }

  // Fixes for constructs the deparser prints wrongly; each is covered by the fidelity corpus.

  /** `(ARRAY[1, 2])[1]`: the deparser drops the parentheses some arguments need. */
  override A_Indirection(node: Pg.A_Indirection, context: never): string {
    const arg = { PalisadeFragment: { sql: `(${this.visit(node.arg as never, context)})` } }
    return super.A_Indirection({ ...node, arg: arg as never }, context)
  }

  /** `FETCH FIRST n ROWS WITH TIES`: the deparser prints a plain LIMIT. */
  override SelectStmt(node: Pg.SelectStmt, context: never): string {
    if (node.limitOption !== 'LIMIT_OPTION_WITH_TIES' || !node.limitCount) {
      return super.SelectStmt(node, context)
    }
    const { limitCount, limitOption: _option, ...rest } = node
    const count = this.visit(limitCount as never, context)
    return `${super.SelectStmt(rest, context)} FETCH FIRST (${count}) ROWS WITH TIES`
  }

  /** `XMLPARSE (CONTENT x PRESERVE WHITESPACE)`: the deparser drops the whitespace option. */
  override XmlExpr(node: Pg.XmlExpr, context: never): string {
    const [value, preserve] = node.args ?? []
    const keep = nodeBody(preserve, 'A_Const')?.boolval?.boolval
    if (node.op !== 'IS_XMLPARSE' || keep !== true) return super.XmlExpr(node, context)
    const option = node.xmloption === 'XMLOPTION_DOCUMENT' ? 'DOCUMENT' : 'CONTENT'
    return `XMLPARSE (${option} ${this.visit(value as never, context)} PRESERVE WHITESPACE)`
  }

  /** `XMLSERIALIZE (... INDENT)`: the deparser drops INDENT. */
  override XmlSerialize(node: Pg.XmlSerialize, context: never): string {
    const text = super.XmlSerialize(node, context)
    return node.indent ? text.replace(/\s*\)$/, ' INDENT )') : text
  }
}

const OPTIONS = { pretty: false }

/** One instance serves every call: a deparser keeps no state between `deparse` calls. */
const DEPARSER = new FragmentDeparser([] as never, OPTIONS)

/**
 * The root context of every call, made once: the deparser builds a fresh one per call otherwise,
 * which showed up in the rewrite's profile. Visitors never modify a context (they `spawn`
 * children), so sharing the root is safe.
 */
const ROOT = new DeparserContext({
  formatter: new SqlFormatter('\n', '  ', false),
  prettyMode: false,
})
const deparse = (node: AstNode): string => DEPARSER.deparse(node as never, ROOT as never) ?? ''

/** Serializes one statement to compact SQL text; the deparser never mutates its input. */
export function deparseStatement(stmt: AstNode): string {
  try {
    return deparse(stmt)
  } catch (error) {
    if (isStackOverflow(error)) throw new StackDepthError()
    throw new PalisadeError(
      SqlState.FeatureNotSupported,
      'feature not supported: statement cannot be serialized',
      {
        cause: error,
      },
    )
  }
}

/** Deparses a list of select targets once, as one fragment node that prints as `a, b, c`. */
export function targetListFragment(targets: readonly AstNode[]): AstNode {
  const sql = targets.map((t) => deparse(t)).join(', ')
  return { PalisadeFragment: { sql } } as unknown as AstNode
}

/** Deparses an expression once, parenthesized so it composes safely with AND. */
export function expressionFragment(expression: AstNode): AstNode {
  return { PalisadeFragment: { sql: `(${deparse(expression)})` } } as unknown as AstNode
}

/** Deparses a whole derived-table body once. */
export function statementFragment(stmt: AstNode): AstNode {
  return { PalisadeFragment: { sql: deparseStatement(stmt) } } as unknown as AstNode
}

/** Deparses an expression of Palisade's own tree to text, for assembling a fragment. */
export function expressionText(expression: AstNode): string {
  return deparse(expression)
}

/**
 * A scan body assembled from pieces that are each deparser output: the pre-deparsed
 * `SELECT … FROM …` head, then WHERE conjuncts joined with AND, each in parentheses, then the
 * fence. Pieces meet only at clause boundaries, so no piece can change another's meaning.
 */
export function scanBodyFragment(
  head: string,
  conjuncts: readonly string[],
  fence: boolean,
): AstNode {
  const where =
    conjuncts.length === 0 ? '' : ` WHERE ${conjuncts.map((c) => `(${c})`).join(' AND ')}`
  return {
    PalisadeFragment: { sql: `${head}${where}${fence ? ' OFFSET 0' : ''}` },
  } as unknown as AstNode
}
