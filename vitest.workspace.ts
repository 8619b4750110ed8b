/** The one list of test projects; `vitest.config.ts` reads it into `test.projects`. */
export default ['packages/*']
