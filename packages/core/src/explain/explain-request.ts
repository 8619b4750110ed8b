import { isTrueOption } from '../analyze/statement-classifier.js'
import { type AstNode, bodyOf, type Pg, stringNode } from '../ast/node.js'
import { taggedBody } from '../ast/tag-dispatch.js'

/** The output formats of EXPLAIN. */
export type ExplainFormat = 'text' | 'json' | 'yaml' | 'xml'

/** How the client asked for its plan; the upstream is always asked for JSON. */
export interface ExplainOptions {
  readonly format: ExplainFormat
  readonly verbose: boolean
  readonly costs: boolean
}

/**
 * The client's EXPLAIN options, and the statement with `FORMAT JSON` in place of the client's
 * format: the proxy redacts the JSON plan tree and prints the requested format itself.
 */
export function explainAsJson(stmt: AstNode): { stmt: AstNode; options: ExplainOptions } {
  const explain = taggedBody(stmt, 'ExplainStmt')
  let format: ExplainFormat = 'text'
  let verbose = false
  let costs = true
  const kept: AstNode[] = []
  for (const option of explain.options ?? []) {
    const def = bodyOf<Pg.DefElem>(option, 'DefElem')
    const name = def?.defname?.toLowerCase()
    if (name === 'format') {
      const value = bodyOf<Pg.String>(def?.arg, 'String')?.sval?.toLowerCase()
      // PostgreSQL rejects an unknown format itself: pass it on unchanged.
      if (value !== 'text' && value !== 'json' && value !== 'yaml' && value !== 'xml') {
        kept.push(option)
      } else format = value
      continue
    }
    if (name === 'verbose') verbose = isTrueOption(def?.arg as AstNode | undefined)
    if (name === 'costs') costs = isTrueOption(def?.arg as AstNode | undefined)
    kept.push(option)
  }
  const json = {
    DefElem: { defname: 'format', arg: stringNode('json'), defaction: 'DEFELEM_UNSPEC' },
  }
  return {
    stmt: { ExplainStmt: { ...explain, options: [...kept, json as AstNode] } } as AstNode,
    options: { format, verbose, costs },
  }
}
