import { describe, expect, it } from 'vitest'
import { tuneHeapGrowth } from '../../src/cli/heap-tuning.js'

describe('the old generation growth of palisade serve', () => {
  it('is left to the operator who chose one, on the command line or in NODE_OPTIONS', () => {
    expect(tuneHeapGrowth(['--heap-growing-percent=50'], '')).toBe(false)
    expect(tuneHeapGrowth([], '--max-old-space-size=512 --heap_growing_percent=30')).toBe(false)
    expect(tuneHeapGrowth(['--max-old-space-size=512'], '--enable-source-maps')).toBe(true)
  })
})
