#!/usr/bin/env node
import { realpathSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { createStore } from '@palisade/store'
import { createServer, VERSION } from '../create-server.js'
import { createLogger } from '../logging/logger.js'
import { auditCommand } from './audit-command.js'
import { applyCommand, exportCommand } from './bundle-commands.js'
import { startDemo } from './demo.js'
import { tuneHeapGrowth } from './heap-tuning.js'
import {
  logLevel,
  SERVE_FLAGS,
  type ServeFlags,
  serverConfigFromArgs,
  storeLocation,
} from './options.js'
import { previewCommand } from './preview-command.js'
import { simulateCommand } from './simulate-command.js'

const COMMANDS = {
  serve: 'start the data plane and the admin API',
  migrate: 'apply the store migrations and exit',
  demo: 'start a throw-away demo (embedded store and shop) and print what to try',
} as const

/** Commands that talk to a running server's admin API; each parses its own flags (`--help`). */
const CLIENT_COMMANDS: Record<
  string,
  { help: string; run: (argv: readonly string[], env?: NodeJS.ProcessEnv) => Promise<number> }
> = {
  preview: { help: "show what a user's session would do with SQL", run: previewCommand },
  export: { help: 'write the access model as a policy bundle (YAML or JSON)', run: exportCommand },
  apply: { help: 'bring the store to a policy bundle (--dry-run: plan only)', run: applyCommand },
  simulate: {
    help: 'replay audited queries under a proposed policy change',
    run: simulateCommand,
  },
  audit: { help: 'verify the audit hash chains, or export an audit log', run: auditCommand },
}

/** The `palisade --help` text. */
export function helpText(): string {
  const flags = Object.entries(SERVE_FLAGS).map(([name, f]) => {
    const flag = `  --${name}${f.type === 'string' ? ' <value>' : ''}`
    return `${flag.padEnd(30)}${f.env.padEnd(30)}${f.help}`
  })
  return [
    `palisade ${VERSION}: a read-only, policy-enforcing PostgreSQL proxy`,
    '',
    'Usage: palisade <command> [flags]',
    '',
    'Commands:',
    ...Object.entries(COMMANDS).map(([name, text]) => `  ${name.padEnd(28)}${text}`),
    ...Object.entries(CLIENT_COMMANDS).map(([name, c]) => `  ${name.padEnd(28)}${c.help}`),
    '',
    `Flags (serve, migrate; demo takes the ports and --log-level):`,
    `  ${'flag'.padEnd(28)}${'environment'.padEnd(30)}meaning`,
    ...flags,
    '',
    'Environment only: PALISADE_SECRET_KEY, PALISADE_ADMIN_JWT_SECRET,',
    'PALISADE_ADMIN_TOKEN_TTL_SECONDS, PALISADE_ADMIN_USERNAME and PALISADE_ADMIN_PASSWORD',
    '(the first admin, created while the store has none). See docs/operations.md.',
  ].join('\n')
}

const OPTIONS = {
  ...Object.fromEntries(Object.entries(SERVE_FLAGS).map(([name, f]) => [name, { type: f.type }])),
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
} as const

/** Runs the CLI with `argv` (without node and the script); returns the exit code. */
export async function main(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const client = argv[0] === undefined ? undefined : CLIENT_COMMANDS[argv[0]]
  if (client) return client.run(argv.slice(1), env)
  const { values, positionals } = parseArgs({
    args: [...argv],
    options: OPTIONS as Record<string, { type: 'string' | 'boolean'; short?: string }>,
    allowPositionals: true,
  })
  const flags = values as ServeFlags & { help?: boolean; version?: boolean }
  const [command, ...extra] = positionals
  if (flags.version) {
    console.log(VERSION)
    return 0
  }
  if (flags.help || command === undefined || command === 'help') {
    console.log(helpText())
    return command === undefined && !flags.help ? 1 : 0
  }
  if (extra.length > 0) throw new Error(`unexpected argument "${extra[0]}"`)
  switch (command) {
    case 'serve':
      tuneHeapGrowth()
      await createServer(serverConfigFromArgs(flags))
      return -1 // keeps running until a signal
    case 'migrate': {
      const store = await createStore(definedLocation(flags))
      await store.close()
      console.log('store migrations applied')
      return 0
    }
    case 'demo': {
      tuneHeapGrowth()
      const config = serverConfigFromArgs(flags)
      const demo = await startDemo({
        dataPort: config.dataPlane?.port,
        adminPort: config.admin?.port,
        logger: createLogger({ level: logLevel(flags) }),
        handleSignals: true,
      })
      console.log(`\n${demo.instructions}\n`)
      return -1
    }
    default:
      throw new Error(`unknown command "${command}" (see palisade --help)`)
  }
}

function definedLocation(flags: ServeFlags): { dataDir?: string; databaseUrl?: string } {
  const { dataDir, databaseUrl } = storeLocation(flags)
  return databaseUrl ? { dataDir, databaseUrl } : { dataDir }
}

/** Whether this module is the process entry point (also through an npm bin symlink). */
function isEntryPoint(): boolean {
  const entry = process.argv[1]
  if (entry === undefined) return false
  try {
    return realpathSync(entry) === fileURLToPath(import.meta.url)
  } catch {
    return false
  }
}

if (isEntryPoint()) {
  main(process.argv.slice(2)).then(
    (code) => {
      if (code >= 0) process.exit(code)
    },
    (error: unknown) => {
      console.error(`palisade: ${error instanceof Error ? error.message : String(error)}`)
      process.exit(1)
    },
  )
}
