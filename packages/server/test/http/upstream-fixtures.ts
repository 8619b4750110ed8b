import { cp, mkdtemp, rm } from 'node:fs/promises'
import { createServer, type Server, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { expect } from 'vitest'
import { type TestContext, unique } from './helpers.js'

/** A small upstream for discovery and fk-suggestions, run as a PGlite datasource's `init_sql`. */
export const UPSTREAM_SQL = `
CREATE SCHEMA app;
CREATE TABLE app.settings (key text PRIMARY KEY, value text);
CREATE TABLE tenants (id int PRIMARY KEY, name text NOT NULL);
CREATE TABLE orders (
  id int PRIMARY KEY, tenant_id int NOT NULL REFERENCES tenants, note text DEFAULT 'none');
CREATE TABLE payments (id int PRIMARY KEY, order_id int REFERENCES orders, amount numeric(10,2));
CREATE VIEW order_notes AS SELECT id, note FROM orders;
CREATE TABLE codes (code text UNIQUE, label text);
CREATE TABLE tagged (id int PRIMARY KEY, code text REFERENCES codes (code));
CREATE TABLE pairs (a int, b int, PRIMARY KEY (a, b));
CREATE TABLE pair_refs (a int, b int, FOREIGN KEY (a, b) REFERENCES pairs);
`

/** Creates a PGlite datasource whose in-memory upstream runs `initSql` on every open. */
export async function pgliteUpstream(ctx: TestContext, initSql = UPSTREAM_SQL) {
  return ctx.store.datasources.create(
    { name: unique('up'), ds_type: 'pglite', config: { init_sql: initSql } },
    ctx.admin.id,
  )
}

let root: Promise<string> | undefined
let copies = 0

/** A data directory with UPSTREAM_SQL applied, made once per test file. */
function templateDir(): Promise<string> {
  root ??= (async () => {
    const dir = await mkdtemp(join(tmpdir(), 'palisade-upstream-'))
    const db = await PGlite.create(join(dir, 'template'))
    await db.exec(UPSTREAM_SQL)
    await db.close()
    return dir
  })()
  return root
}

/**
 * Creates a PGlite datasource on its own copy of a prepared data directory: opening one is
 * much faster than creating an in-memory database, and a test may change it as the upstream.
 */
export async function pgliteDirUpstream(ctx: TestContext) {
  const dir = await templateDir()
  const dataDir = join(dir, `copy${++copies}`)
  await cp(join(dir, 'template'), dataDir, { recursive: true })
  const ds = await ctx.store.datasources.create(
    { name: unique('up'), ds_type: 'pglite', config: { data_dir: dataDir } },
    ctx.admin.id,
  )
  return { ds, dataDir }
}

/** Deletes the data directories of `pgliteDirUpstream`. */
export async function removeUpstreamDirs(): Promise<void> {
  if (root) await rm(await root, { recursive: true, force: true })
}

/** Creates a postgres datasource on 127.0.0.1:`port`. */
export async function postgresAt(ctx: TestContext, port: number) {
  return ctx.store.datasources.create(
    {
      name: unique('pg'),
      ds_type: 'postgres',
      config: { host: '127.0.0.1', port, database: 'x', username: 'x', sslmode: 'disable' },
    },
    ctx.admin.id,
  )
}

/** A port nothing listens on: connecting fails at once. */
export async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

/** A TCP server that accepts connections and never answers: a connect stays pending. */
export interface Blackhole {
  port: number
  /** Resolves with the next accepted socket. */
  accepted(): Promise<Socket>
  close(): Promise<void>
}

export async function blackhole(): Promise<Blackhole> {
  const sockets: Socket[] = []
  const waiting: ((socket: Socket) => void)[] = []
  const server: Server = createServer((socket) => {
    socket.on('error', () => undefined)
    // Read and drop what the client sends, so its FIN is seen as 'end'.
    socket.resume()
    const next = waiting.shift()
    if (next) next(socket)
    else sockets.push(socket)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as { port: number }).port,
    accepted: () => {
      const ready = sockets.shift()
      return ready ? Promise.resolve(ready) : new Promise((resolve) => waiting.push(resolve))
    },
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy()
        server.close(() => resolve())
      }),
  }
}

/** Resolves once the peer has closed the socket. */
export function closed(socket: Socket): Promise<void> {
  if (socket.destroyed || socket.readableEnded) return Promise.resolve()
  return new Promise((resolve) => {
    socket.once('close', () => resolve())
    socket.once('end', () => resolve())
  })
}

/** Submits a discovery job and expects 202 with its id. */
export async function submit(ctx: TestContext, datasourceId: string, body: unknown) {
  const res = await ctx.json('POST', `/api/v1/datasources/${datasourceId}/discover`, { body })
  expect(res.status, JSON.stringify(res.body)).toBe(202)
  return res.body.job_id as string
}

/** Polls a job until it is no longer running. */
export async function finished(ctx: TestContext, datasourceId: string, jobId: string) {
  const deadline = Date.now() + 30_000
  for (;;) {
    const { status, body } = await ctx.json(
      'GET',
      `/api/v1/datasources/${datasourceId}/discover/${jobId}`,
    )
    expect(status).toBe(200)
    if (body.status !== 'running') return body
    if (Date.now() > deadline) throw new Error(`job ${jobId} still running`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** Runs one job to its end and returns it. */
export async function runJob(ctx: TestContext, datasourceId: string, body: unknown) {
  return finished(ctx, datasourceId, await submit(ctx, datasourceId, body))
}
