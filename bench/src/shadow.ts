/**
 * bench/shadow: what shadow policies cost a statement's rewrite. The same session without any
 * shadow policy (the baseline every session without one pays: no extra work at all) and with
 * two (a row filter and a column deny, evaluated on the side for the audit), cache miss and hit,
 * measured alternately so machine load affects both alike.
 */
import { compileSession, loadCore, rewrite, type SessionInput } from '@palisade/core'
import { input, shapes } from './rewrite.js'
import { fmt, summarize } from './stats.js'

const withShadow: SessionInput = {
  ...input,
  policies: [
    ...input.policies,
    {
      id: 's1',
      name: 'shadow region',
      version: 1,
      type: 'row_filter',
      priority: 100,
      targets: [{ schemas: ['public'], tables: ['customers', 'orders'] }],
      filterExpression: "status <> 'void'",
      enforcement: 'shadow',
    },
    {
      id: 's2',
      name: 'shadow deny email',
      version: 1,
      type: 'column_deny',
      priority: 100,
      targets: [{ schemas: ['public'], tables: ['orders'], columns: ['email'] }],
      enforcement: 'shadow',
    },
  ],
}

/** Median µs of `rewrite` per session kind, alternating, over `rounds` calls each. */
async function time(sql: string, miss: boolean, rounds: number) {
  const plain = await Promise.all(Array.from({ length: 20 }, () => compileSession(input)))
  const shadowed = await Promise.all(Array.from({ length: 20 }, () => compileSession(withShadow)))
  const a: number[] = []
  const b: number[] = []
  for (let n = 0; n < rounds; n++) {
    // A miss: SQL no cache has seen (its own text per kind, so neither warms the parse cache
    // for the other); a hit: the same text again on a warm session. The order alternates.
    const kinds = [
      [plain, a, 'p'],
      [shadowed, b, 's'],
    ] as const
    for (const [sessions, samples, tag] of n % 2 ? kinds : [...kinds].reverse()) {
      const text = miss ? `${sql} /* ${tag}${n} */` : sql
      const session = sessions[n % sessions.length]!
      const start = process.hrtime.bigint()
      try {
        rewrite(text, session)
      } catch {}
      samples.push(Number(process.hrtime.bigint() - start) / 1000)
    }
  }
  const skip = Math.floor(rounds / 10)
  return [summarize(a.slice(skip)).median, summarize(b.slice(skip)).median] as const
}

export async function run(): Promise<void> {
  await loadCore()
  console.log(
    '| shape | no shadow, miss µs | shadow, miss µs | miss ratio | no shadow, hit µs | shadow, hit µs |',
  )
  console.log('|---|---|---|---|---|---|')
  for (const [name, sql] of shapes) {
    const [plainMiss, shadowMiss] = await time(sql, true, 3000)
    const [plainHit, shadowHit] = await time(sql, false, 20000)
    console.log(
      `| ${name} | ${fmt(plainMiss)} | ${fmt(shadowMiss)} | ${fmt(shadowMiss / plainMiss, 2)}× | ${fmt(plainHit, 2)} | ${fmt(shadowHit, 2)} |`,
    )
  }
}
