import { describe, expect, it } from 'vitest'
import { FrameSplitter } from '../src/upstream/frame-splitter.js'
import { decodeStartupMessage } from '../src/upstream/startup-messages.js'

/** One backend message: code, int32 length, body. */
function frame(code: string, ...parts: (Buffer | string | number)[]): Buffer {
  const body = Buffer.concat(
    parts.map((p) => {
      if (typeof p === 'string') return Buffer.from(`${p}\0`)
      if (typeof p === 'number') {
        const b = Buffer.alloc(4)
        b.writeInt32BE(p)
        return b
      }
      return p
    }),
  )
  const head = Buffer.alloc(5)
  head.write(code, 0, 'latin1')
  head.writeInt32BE(body.length + 4, 1)
  return Buffer.concat([head, body])
}

function decodeAll(bytes: Buffer) {
  return new FrameSplitter().push(bytes).map(decodeStartupMessage)
}

describe('decodeStartupMessage', () => {
  it('decodes what a session start brings, split anywhere', () => {
    const row = Buffer.alloc(2)
    row.writeInt16BE(2)
    const stream = Buffer.concat([
      frame('R', 5, Buffer.from([1, 2, 3, 4])),
      frame('R', 10, 'SCRAM-SHA-256', 'SCRAM-SHA-256-PLUS', Buffer.from([0])),
      frame('R', 11, Buffer.from('r=abc,s=c2FsdA==,i=4096')),
      frame('R', 12, Buffer.from('v=c2ln')),
      frame('R', 0),
      frame('S', 'server_version', '17.2'),
      frame('K', 4242, -7),
      frame('D', row, -1, 3, Buffer.from('hé')),
      frame('Z', Buffer.from('I')),
      frame('N', 'SNOTICE\0'),
    ])
    const expected = [
      { name: 'authenticationMD5Password', salt: Buffer.from([1, 2, 3, 4]) },
      { name: 'authenticationSASL', mechanisms: ['SCRAM-SHA-256', 'SCRAM-SHA-256-PLUS'] },
      { name: 'authenticationSASLContinue', data: 'r=abc,s=c2FsdA==,i=4096' },
      { name: 'authenticationSASLFinal', data: 'v=c2ln' },
      { name: 'authenticationOk' },
      { name: 'parameterStatus', parameterName: 'server_version', parameterValue: '17.2' },
      { name: 'backendKeyData', processId: 4242, secretKey: -7 },
      { name: 'dataRow', fields: [null, 'hé'] },
      { name: 'readyForQuery', status: 'I' },
      { name: 'other', code: 'N'.charCodeAt(0) },
    ]
    expect(decodeAll(stream)).toEqual(expected)
    const splitter = new FrameSplitter()
    const oneByOne = [...stream].flatMap((b) => splitter.push(Buffer.from([b])))
    expect(oneByOne.map(decodeStartupMessage)).toEqual(expected)
  })

  it('reads the primary message of an ErrorResponse', () => {
    const error = frame(
      'E',
      'SFATAL',
      'C28P01',
      'Mpassword authentication failed',
      Buffer.from([0]),
    )
    expect(decodeAll(error)).toEqual([{ name: 'error', message: 'password authentication failed' }])
  })

  it('reads a cleartext password request and names an authentication it does not know', () => {
    expect(decodeAll(frame('R', 3))).toEqual([{ name: 'authenticationCleartextPassword' }])
    expect(decodeAll(frame('R', 7))).toEqual([{ name: 'authenticationOther', code: 7 }])
  })
})
