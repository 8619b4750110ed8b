import { PolicyType, VALUE_REVEALING_AGGREGATES } from '@palisade/core'
import { POLICY_TYPES } from '@palisade/store'
import { describe, expect, it } from 'vitest'
import * as consoleKinds from '../console/policy-kinds.js'

describe("the console's policy form lists", () => {
  it('offers every policy type the server takes', () => {
    expect([...consoleKinds.POLICY_TYPES].sort()).toEqual([...POLICY_TYPES].sort())
    expect([...consoleKinds.POLICY_TYPES].sort()).toEqual(Object.values(PolicyType).sort())
  })

  it('offers exactly the aggregates an aggregation policy may allow', () => {
    expect([...consoleKinds.VALUE_REVEALING_AGGREGATES]).toEqual([...VALUE_REVEALING_AGGREGATES])
  })

  it('asks for columns on column policies and projection only', () => {
    const withColumns = consoleKinds.POLICY_TYPES.filter(consoleKinds.hasColumns)
    expect(withColumns).toEqual(['column_mask', 'column_allow', 'column_deny', 'projection'])
  })
})
