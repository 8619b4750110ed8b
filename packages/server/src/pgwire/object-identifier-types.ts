/**
 * Object-identifier types (`reg*`) and their arrays, by type OID. A parameter declared with one
 * of them makes PostgreSQL look the value up by name in the real catalog, where a hidden object
 * answers differently from a missing one: Parse refuses such declarations outright, whatever
 * the value will be.
 */
const OBJECT_IDENTIFIER_TYPES: ReadonlyMap<number, string> = new Map([
  [24, 'regproc'],
  [2202, 'regprocedure'],
  [2203, 'regoper'],
  [2204, 'regoperator'],
  [2205, 'regclass'],
  [2206, 'regtype'],
  [3734, 'regconfig'],
  [3769, 'regdictionary'],
  [4089, 'regnamespace'],
  [4096, 'regrole'],
  [4191, 'regcollation'],
  [1008, 'regproc[]'],
  [2207, 'regprocedure[]'],
  [2208, 'regoper[]'],
  [2209, 'regoperator[]'],
  [2210, 'regclass[]'],
  [2211, 'regtype[]'],
  [3735, 'regconfig[]'],
  [3770, 'regdictionary[]'],
  [4090, 'regnamespace[]'],
  [4097, 'regrole[]'],
  [4192, 'regcollation[]'],
])

/** The name of the first object-identifier type among declared parameter types, if any. */
export function objectIdentifierParameter(types: readonly number[]): string | undefined {
  for (const type of types) {
    const name = OBJECT_IDENTIFIER_TYPES.get(type)
    if (name !== undefined) return name
  }
  return undefined
}
