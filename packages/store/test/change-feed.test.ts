import { describe, expect, it } from 'vitest'
import {
  ChangeFeed,
  type ChangeFeedEvent,
  type ChangeNotice,
  encodeChangePayload,
} from '../src/kernel/change-feed.js'

/** A feed whose NOTIFYs are collected instead of sent. */
function feedWithTransport(id: string) {
  const sent: unknown[] = []
  const events: ChangeFeedEvent[] = []
  const feed = new ChangeFeed(id, (e) => events.push(e))
  feed.attach({ listening: true, notify: (payload) => sent.push(JSON.parse(payload)) })
  return { feed, sent, events }
}

describe('change feed confirmations', () => {
  it('confirms a change from another instance only after its listeners marked their sessions', () => {
    const { feed, sent } = feedWithTransport('b')
    const seen: ChangeNotice[] = []
    feed.subscribe((n) => {
      seen.push(n)
      expect(sent).toEqual([])
    })
    feed.receive(encodeChangePayload('a', [{ type: 'ds', datasourceId: 'd1' }], 7))
    expect(seen).toEqual([{ type: 'ds', datasourceId: 'd1', origin: 'remote' }])
    expect(sent).toEqual([{ i: 'b', ack: ['a', 7] }])
  })

  it('settles once every listed instance confirmed, even when a confirmation came first', async () => {
    const { feed, events } = feedWithTransport('a')
    const wait = feed.expectConfirmations(1, ['a', 'b', 'c'])
    feed.receive(JSON.stringify({ i: 'b', ack: ['a', 1] }))
    feed.receive(JSON.stringify({ i: 'c', ack: ['someone-else', 1] }))
    let settled = false
    const done = wait.settled(1000).then(() => {
      settled = true
    })
    await new Promise((r) => setTimeout(r, 10))
    expect(settled).toBe(false)
    feed.receive(JSON.stringify({ i: 'c', ack: ['a', 1] }))
    await done
    expect(events).toEqual([])
  })

  it('reports instances that did not confirm in time and skips them until heard from', async () => {
    const { feed, events } = feedWithTransport('a')
    await feed.expectConfirmations(1, ['b']).settled(20)
    expect(events).toMatchObject([{ type: 'unconfirmed', instanceIds: ['b'] }])
    const started = performance.now()
    await feed.expectConfirmations(2, ['b']).settled(1000)
    expect(performance.now() - started).toBeLessThan(100)
    feed.receive(encodeChangePayload('b', [{ type: 'everyone' }], 1))
    const wait = feed.expectConfirmations(3, ['b'])
    feed.receive(JSON.stringify({ i: 'b', ack: ['a', 3] }))
    await wait.settled(1000)
    expect(events.filter((e) => e.type !== 'received')).toHaveLength(1)
    // The change carried its send time: the feed's lag is measured on arrival.
    const [arrival] = events.filter((e) => e.type === 'received')
    expect(arrival).toMatchObject({ type: 'received', lagMs: expect.any(Number) })
    expect(arrival?.type === 'received' && arrival.lagMs).toBeLessThan(1000)
  })

  it('does not wait while its own listener is down', async () => {
    const feed = new ChangeFeed('a')
    feed.attach({ listening: false, notify: () => {} })
    const started = performance.now()
    await feed.expectConfirmations(1, ['b']).settled(1000)
    expect(performance.now() - started).toBeLessThan(100)
  })

  it('marks every session once when the listener resumes', () => {
    const { feed, events } = feedWithTransport('a')
    const seen: ChangeNotice[] = []
    feed.subscribe((n) => seen.push(n))
    feed.lost(new Error('terminating connection due to administrator command'))
    feed.resumed()
    expect(seen).toEqual([{ type: 'everyone', origin: 'remote' }])
    expect(events).toEqual([
      { type: 'listener_lost', error: 'terminating connection due to administrator command' },
      { type: 'listener_restored' },
    ])
  })
})
