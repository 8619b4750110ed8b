import { defineConfig } from 'drizzle-kit'

/** drizzle-kit reads this to generate the committed migrations in `drizzle/`. */
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/tables.ts',
  out: './drizzle',
})
