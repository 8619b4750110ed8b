import { describe, expect, it } from 'vitest'
import { classifyColumn, ibanValid, luhn } from '../src/classification/detectors.js'

const text = (name: string) => ({ name, type: 'text' })

describe('classification detectors', () => {
  it('checks payment cards with Luhn and IBANs with mod 97', () => {
    expect(luhn('4111111111111111')).toBe(true)
    expect(luhn('4111111111111112')).toBe(false)
    expect(ibanValid('DE89 3704 0044 0532 0130 00')).toBe(true)
    expect(ibanValid('DE89370400440532013001')).toBe(false)
  })

  it('finds nothing in ordinary ids, codes, amounts, dates, uuids and prose', () => {
    const samples: [string, string[]][] = [
      ['id', ['1', '2', '3', '4']],
      ['order_no', ['100200300', '200300400', '300400500']],
      ['amount', ['10.00', '2999.99', '0.50']],
      ['created', ['2024-01-01', '2024-02-03', '2023-12-31']],
      [
        'ref',
        ['0190a0a0-0000-7000-8000-000000000000', '0190a0a0-0000-7000-8000-000000000001', 'x'],
      ],
      ['legacy_ref', ['1234567812345678', '1111222233334445', '9999000011112223']],
      ['version', ['1.2.3', '2.0.0', '10.1.4']],
      ['notes', ['call me maybe', 'see ticket 42', 'n/a']],
    ]
    for (const [name, values] of samples)
      expect(classifyColumn(text(name), values), name).toEqual([])
  })

  it('needs most sampled values to match, and lets values overrule a misleading name', () => {
    const mixed = ['a@b.test', 'c@d.test', 'not an email', 'nope', 'none']
    expect(classifyColumn(text('contact'), mixed)).toEqual([])
    // Named like an email, but the values say otherwise: no proposal.
    expect(classifyColumn(text('email'), ['yes', 'no', 'yes', 'no'])).toEqual([])
    // A name alone (sampling off) proposes, with low confidence.
    expect(classifyColumn(text('email'), null)).toEqual([
      { tag: 'pii.email', confidence: 0.5, evidence: 'name' },
    ])
    // A date is a birth date only when the name says so.
    expect(
      classifyColumn({ name: 'shipped_on', type: 'date' }, [
        '1980-01-01',
        '1990-02-02',
        '1970-03-03',
      ]),
    ).toEqual([])
  })
})
