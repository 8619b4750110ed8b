import { existsSync, lstatSync, readdirSync, readFileSync, realpathSync } from 'node:fs'
import { dirname, join, sep } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The installed size `@palisade/server` should stay under (issue 45). */
const GOAL_BYTES = 65 * 1024 * 1024
const TOP = 12

interface Manifest {
  name: string
  version?: string
  files?: string[]
  dependencies?: Record<string, string>
  optionalDependencies?: Record<string, string>
}

/** File sizes, and the disk space they take (`du`: whole blocks, so many small files weigh more). */
interface Size {
  bytes: number
  disk: number
}

interface Installed extends Size {
  name: string
  version: string
}

/**
 * What `npm install @palisade/server` puts on disk: the server's published files and those of
 * every production dependency, each package once. It walks the dependency tree as Node resolves
 * it from this checkout's `node_modules`; workspace packages count their `files` (the built
 * `dist`), so build first. The goal is checked against disk usage, as `du` reports it.
 */
export async function run(): Promise<void> {
  const root = fileURLToPath(new URL('../../packages/server', import.meta.url))
  const seen = new Map<string, Installed>()
  visit(realpathSync(root), seen)
  const all = [...seen.values()].sort((a, b) => b.disk - a.disk)
  const total = sum(all)
  const verdict = total.disk <= GOAL_BYTES ? 'met' : 'NOT met'
  console.log(`@palisade/server with its production dependencies: ${all.length} packages`)
  console.log(
    `installed size: ${mb(total.disk)} on disk, ${mb(total.bytes)} of files (goal <= ${mb(GOAL_BYTES)} on disk: ${verdict})\n`,
  )
  console.log('| package | version | on disk | files | share of disk |')
  console.log('| --- | --- | ---: | ---: | ---: |')
  const row = (name: string, version: string, size: Size) =>
    `| ${name} | ${version} | ${mb(size.disk)} | ${mb(size.bytes)} | ${((100 * size.disk) / total.disk).toFixed(1)} % |`
  for (const p of all.slice(0, TOP)) console.log(row(p.name, p.version, p))
  if (all.length > TOP) console.log(row(`${all.length - TOP} others`, '', sum(all.slice(TOP))))
}

function sum(sizes: readonly Size[]): Size {
  return {
    bytes: sizes.reduce((n, s) => n + s.bytes, 0),
    disk: sizes.reduce((n, s) => n + s.disk, 0),
  }
}

function visit(dir: string, seen: Map<string, Installed>): void {
  if (seen.has(dir)) return
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest
  const workspace = !dir.split(sep).includes('node_modules')
  const size = workspace ? publishedSize(dir, manifest) : treeSize(dir)
  seen.set(dir, { name: manifest.name, version: manifest.version ?? '', ...size })
  const deps = { ...manifest.dependencies, ...manifest.optionalDependencies }
  for (const name of Object.keys(deps)) {
    const found = resolvePackage(dir, name)
    if (found) visit(found, seen)
    else if (!manifest.optionalDependencies?.[name]) {
      throw new Error(`${manifest.name}: dependency ${name} is not installed`)
    }
  }
}

/** Where Node finds package `name` from `dir`: the nearest `node_modules/name` upwards. */
function resolvePackage(dir: string, name: string): string | undefined {
  for (let at = dir; ; at = dirname(at)) {
    const candidate = join(at, 'node_modules', name)
    if (existsSync(join(candidate, 'package.json'))) return realpathSync(candidate)
    if (dirname(at) === at) return undefined
  }
}

/** A workspace package as published: `package.json` plus its `files`. */
function publishedSize(dir: string, manifest: Manifest): Size {
  const parts = [treeSize(join(dir, 'package.json'))]
  for (const entry of manifest.files ?? []) {
    const path = join(dir, entry)
    if (!existsSync(path)) throw new Error(`${manifest.name}: ${entry} is missing (run pnpm build)`)
    parts.push(treeSize(path))
  }
  return sum(parts)
}

/** A file, or every file under a folder; nested `node_modules` hold other packages. */
function treeSize(path: string): Size {
  const stat = lstatSync(path)
  if (stat.isFile()) return { bytes: stat.size, disk: stat.blocks * 512 }
  if (!stat.isDirectory()) return { bytes: 0, disk: 0 }
  const parts = readdirSync(path)
    .filter((entry) => entry !== 'node_modules')
    .map((entry) => treeSize(join(path, entry)))
  return sum([{ bytes: 0, disk: stat.blocks * 512 }, ...parts])
}

/** Mebibytes (2^20 bytes), as `du -m` counts. */
function mb(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`
}
