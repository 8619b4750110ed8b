import type { NodeMapper } from './map-tree.js'
import type { AstNode, Pg } from './node.js'

/** Every node tag the parser's types declare (`'SelectStmt'`, `'RangeVar'`, …). */
export type NodeTag = Pg.Node extends infer N
  ? N extends unknown
    ? keyof N & string
    : never
  : never

/** The body type of the nodes of one tag. */
export type BodyOf<K extends NodeTag> = Extract<Pg.Node, { [P in K]: unknown }>[K]

/** The body of `value` when it is a node of `tag`, typed by the tag; otherwise undefined. */
export function nodeBody<K extends NodeTag>(value: unknown, tag: K): BodyOf<K> | undefined {
  if (value === null || typeof value !== 'object') return undefined
  return (value as Partial<Record<K, BodyOf<K>>>)[tag]
}

/** The body of a node known to be of `tag` (its tag was checked): typed by the tag. */
export function taggedBody<K extends NodeTag>(node: unknown, tag: K): BodyOf<K> {
  return (node as Record<K, BodyOf<K>>)[tag]
}

/** Handles the nodes of one tag: a replacement, or undefined to let later passes and the walk go on. */
export type TagHandler<K extends NodeTag> = (body: BodyOf<K>, node: AstNode) => AstNode | undefined

/** One concern of a tree transformation: typed handlers for the tags it cares about. */
export type TreePass = { readonly [K in NodeTag]?: TagHandler<K> }

type AnyHandler = (body: unknown, node: AstNode) => AstNode | undefined

/** Typed handlers by tag for a walk of one's own: each gets its node's body, typed by tag. */
export type TagTable<R, A extends unknown[] = []> = {
  readonly [K in NodeTag]?: (body: BodyOf<K>, ...args: A) => R
}

/** Calls the handler of `tag` in `table` with the body, or returns undefined when it has none. */
export function dispatchTag<R, A extends unknown[]>(
  table: TagTable<R, A>,
  tag: string,
  body: unknown,
  ...args: A
): R | undefined {
  const handler = table[tag as NodeTag] as ((body: unknown, ...args: A) => R) | undefined
  return handler?.(body, ...args)
}

/**
 * One mapper for `mapTree` from several passes: each node goes to the handlers of its tag, in
 * pass order, and the first replacement wins. A tag no pass handles is walked into.
 */
export function composePasses(passes: readonly TreePass[]): NodeMapper {
  const byTag = new Map<string, AnyHandler[]>()
  for (const pass of passes) {
    for (const tag of Object.keys(pass)) {
      const handler = pass[tag as NodeTag] as AnyHandler
      const list = byTag.get(tag)
      if (list) list.push(handler)
      else byTag.set(tag, [handler])
    }
  }
  return (node, tag, body) => {
    const handlers = byTag.get(tag)
    if (handlers === undefined) return undefined
    for (const handler of handlers) {
      const replaced = handler(body, node)
      if (replaced !== undefined) return replaced
    }
    return undefined
  }
}
