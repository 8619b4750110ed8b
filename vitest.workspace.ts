/**
 * The one list of test projects; `vitest.config.ts` reads it into `test.projects`. Examples
 * join only when they have a `vitest.config.ts` (embed-rewriter has no tests).
 */
export default ['packages/*', 'examples/*/vitest.config.ts']
