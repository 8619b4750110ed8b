import { type AstNode, type Pg, stringsOf, tagOf } from '../ast/node.js'
import { taggedBody } from '../ast/tag-dispatch.js'

/**
 * `name(type, ...)` as PostgreSQL prints it in "function ... does not exist", with the
 * argument types guessed from the syntax (literals; anything else is `unknown`).
 */
export function functionSignature(call: Pg.FuncCall): string {
  const name = stringsOf(call.funcname).join('.')
  const args = (call.args ?? []).map((arg) => guessType(arg as AstNode))
  return `${name}(${args.join(', ')})`
}

function guessType(node: AstNode): string {
  const tag = tagOf(node)
  if (tag === 'A_Const') {
    const c = taggedBody(node, 'A_Const')
    if (c.ival !== undefined) return 'integer'
    if (c.fval !== undefined) return 'numeric'
    if (c.boolval !== undefined) return 'boolean'
    return 'unknown'
  }
  if (tag === 'TypeCast') {
    const names = stringsOf(taggedBody(node, 'TypeCast').typeName?.names)
    return names[names.length - 1] ?? 'unknown'
  }
  return 'unknown'
}
