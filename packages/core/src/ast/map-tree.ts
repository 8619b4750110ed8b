import { type AstNode, type NodeBody, tagOf } from './node.js'

/**
 * Called for every node on the way down. Return a replacement to stop descending there,
 * or undefined to keep walking into the node's fields.
 */
export type NodeMapper = (node: AstNode, tag: string, body: NodeBody) => AstNode | undefined

/**
 * Copy-on-write map over an AST: unchanged subtrees are returned as the same objects,
 * changed ones are new objects, and the input is never mutated (parse results are cached).
 */
export function mapTree<T>(value: T, mapper: NodeMapper): T {
  if (value === null || typeof value !== 'object') return value
  if (Array.isArray(value)) {
    let out: unknown[] | undefined
    for (let i = 0; i < value.length; i++) {
      const item = value[i]
      const mapped = mapTree(item, mapper)
      if (mapped !== item) {
        out ??= value.slice()
        out[i] = mapped
      }
    }
    return (out ?? value) as T
  }
  const tag = tagOf(value)
  if (tag !== undefined) {
    const body = (value as Record<string, NodeBody>)[tag] as NodeBody
    const replaced = mapper(value as unknown as AstNode, tag, body)
    if (replaced !== undefined) return replaced as T
    const newBody = mapFields(body, mapper)
    return (newBody === body ? value : { [tag]: newBody }) as T
  }
  return mapFields(value as NodeBody, mapper) as T
}

/** Maps the fields of a node body (not the node itself): for mappers that rebuild a node. */
export function mapFields(body: NodeBody, mapper: NodeMapper): NodeBody {
  let out: NodeBody | undefined
  for (const key in body) {
    const field = body[key]
    if (field === null || typeof field !== 'object') continue
    const mapped = mapTree(field, mapper)
    if (mapped !== field) {
      out ??= { ...body }
      out[key] = mapped
    }
  }
  return out ?? body
}

/** Calls `visit` for every node in the tree, depth first; return false to skip a node's fields. */
export function walkTree(value: unknown, visit: (tag: string, body: NodeBody) => boolean): void {
  if (value === null || typeof value !== 'object') return
  if (Array.isArray(value)) {
    for (const item of value) walkTree(item, visit)
    return
  }
  const tag = tagOf(value)
  const body =
    tag === undefined ? (value as NodeBody) : ((value as Record<string, NodeBody>)[tag] as NodeBody)
  if (tag !== undefined && visit(tag, body) === false) return
  for (const key in body) {
    const field = body[key]
    if (field !== null && typeof field === 'object') walkTree(field, visit)
  }
}
