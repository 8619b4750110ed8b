import { isIP } from 'node:net'

/**
 * What classification looks for (docs/policies.md, "Classification"): each detector proposes one
 * tag from a column's name, its sampled values, or both. Value tests are strict (checksums,
 * formats with separators) so ordinary ids, codes and amounts are not mistaken for PII.
 */
export interface Detector {
  tag: string
  /** Column names that suggest the tag (snake_case words). */
  name: RegExp
  /** Whether one sampled value looks like the tag; absent: names only. */
  value?: (text: string) => boolean
  /** A name match is needed for values to count (a date alone is not a birth date). */
  valuesNeedName?: boolean
  /** Column types sampled for it. */
  types: (type: string) => boolean
}

const textual = (type: string) =>
  /^(text|character varying|character|varchar|char|citext|name)\b/.test(type)
const network = (type: string) => type === 'inet' || type === 'cidr'
const dateLike = (type: string) => type === 'date' || type.startsWith('timestamp')

/** Luhn checksum over a digit string. */
export function luhn(digits: string): boolean {
  let sum = 0
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i])
    if (i % 2 === 1) {
      d *= 2
      if (d > 9) d -= 9
    }
    sum += d
  }
  return sum % 10 === 0
}

/** ISO 13616 check: the rearranged IBAN as a number is 1 modulo 97. */
export function ibanValid(text: string): boolean {
  const iban = text.replace(/\s+/g, '').toUpperCase()
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/.test(iban)) return false
  const moved = `${iban.slice(4)}${iban.slice(0, 4)}`
  let rest = 0
  for (const ch of moved) {
    const n = ch >= 'A' ? String(ch.charCodeAt(0) - 55) : ch
    for (const digit of n) rest = (rest * 10 + Number(digit)) % 97
  }
  return rest === 1
}

function cardNumber(text: string): boolean {
  if (!/^[0-9][0-9 -]{11,22}[0-9]$/.test(text)) return false
  const digits = text.replace(/[ -]/g, '')
  if (digits.length < 13 || digits.length > 19 || /^(\d)\1+$/.test(digits)) return false
  return /^[3-6]/.test(digits) && luhn(digits)
}

/** Shapes other detectors own, which a phone pattern would otherwise also accept. */
const NOT_PHONES = [/^\d{3}-\d{2}-\d{4}$/, /^\d{4}-\d{2}-\d{2}$/, /^\d{1,3}(\.\d{1,3}){3}$/]

function phoneNumber(text: string): boolean {
  if (!/^\+?[0-9][0-9 ().-]{5,22}[0-9]$/.test(text)) return false
  if (NOT_PHONES.some((shape) => shape.test(text))) return false
  const digits = text.replace(/\D/g, '').length
  // Formatting is required: a bare run of digits is more likely an id than a phone number.
  return digits >= 7 && digits <= 15 && (text.startsWith('+') || /[ ().-]/.test(text))
}

function birthDate(text: string): boolean {
  const year = Number(/^(\d{4})-\d{2}-\d{2}/.exec(text)?.[1])
  const now = new Date().getUTCFullYear()
  return year >= now - 120 && year <= now - 5
}

export const DETECTORS: readonly Detector[] = [
  {
    tag: 'pii.email',
    name: /(^|_)(e_?mail|email_address|mail)(_address)?$/,
    value: (t) => /^[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}$/.test(t),
    types: textual,
  },
  {
    tag: 'pii.phone',
    name: /(^|_)(phone|mobile|cell|tel|telephone|fax)(_?(number|no))?$/,
    value: phoneNumber,
    types: textual,
  },
  {
    tag: 'pii.payment_card',
    name: /(^|_)(card|cc|credit_card|pan)_?(number|num|no)?$/,
    value: cardNumber,
    types: textual,
  },
  { tag: 'pii.iban', name: /(^|_)iban$/, value: ibanValid, types: textual },
  {
    tag: 'pii.ssn',
    name: /(^|_)(ssn|social_security(_number)?)$/,
    value: (t) => /^(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}$/.test(t),
    types: textual,
  },
  {
    tag: 'pii.ip_address',
    name: /(^|_)(ip|ip_?addr(ess)?|client_ip|remote_addr)$/,
    value: (t) => isIP(t.replace(/\/\d+$/, '')) !== 0,
    types: (type) => textual(type) || network(type),
  },
  {
    tag: 'pii.date_of_birth',
    name: /(^|_)(dob|birth_?date|date_of_birth|birthday|born_on)$/,
    value: birthDate,
    valuesNeedName: true,
    types: dateLike,
  },
]

/** Below this share of matching sampled values, values do not support a tag. */
export const VALUE_THRESHOLD = 0.8
/** Fewer non-null sampled values than this prove nothing either way. */
export const MIN_SAMPLES = 3

/** A proposed tag with its confidence and what it rests on. */
export interface Verdict {
  tag: string
  confidence: number
  evidence: 'name' | 'values' | 'name+values'
}

/**
 * The tags one column gets from its name and, when sampled, its non-null values: a name alone
 * proposes with confidence 0.5 unless the values contradict it; values alone need 80 % matches.
 */
export function classifyColumn(
  column: { name: string; type: string },
  values: readonly string[] | null,
): Verdict[] {
  const name = column.name.toLowerCase()
  const out: Verdict[] = []
  for (const d of DETECTORS) {
    if (!d.types(column.type)) continue
    const named = d.name.test(name)
    const enough = values !== null && values.length >= MIN_SAMPLES && d.value !== undefined
    const share =
      enough && d.value
        ? values.filter((v) => (d.value as (t: string) => boolean)(v)).length / values.length
        : null
    if (share !== null && share >= VALUE_THRESHOLD && (named || !d.valuesNeedName)) {
      const confidence = Math.min(1, share * 0.9 + (named ? 0.1 : 0))
      out.push({ tag: d.tag, confidence, evidence: named ? 'name+values' : 'values' })
    } else if (named && (share === null || share >= 0.5)) {
      out.push({ tag: d.tag, confidence: 0.5, evidence: 'name' })
    }
  }
  return out
}
