import { type AstNode, type Pg, stringsOf, tagOf } from '../ast/node.js'
import { taggedBody } from '../ast/tag-dispatch.js'

/** The output column name PostgreSQL gives `expr::type` (it is lost when the cast is replaced). */
export function castLabel(cast: Pg.TypeCast, type: string): string {
  return expressionLabel(cast.arg as AstNode | undefined) ?? type
}

function expressionLabel(node: AstNode | undefined): string | undefined {
  switch (tagOf(node)) {
    case 'ColumnRef': {
      const fields = stringsOf(taggedBody(node, 'ColumnRef').fields)
      const last = fields[fields.length - 1]
      return last === '*' ? undefined : last
    }
    case 'FuncCall': {
      const names = stringsOf(taggedBody(node, 'FuncCall').funcname)
      return names[names.length - 1]
    }
    case 'TypeCast': {
      const cast = taggedBody(node, 'TypeCast')
      const names = stringsOf(cast.typeName?.names)
      return expressionLabel(cast.arg as AstNode | undefined) ?? names[names.length - 1]
    }
    default:
      return undefined
  }
}
