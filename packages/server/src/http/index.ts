/**
 * @module
 * The admin REST API (admin-api.md): `createAdminApp` returns a Hono app.
 */
export { type AdminAppOptions, createAdminApp } from './app.js'
