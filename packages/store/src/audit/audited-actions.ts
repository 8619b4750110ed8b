import type { StoreContext } from '../kernel/context.js'

/** What a preview ran, as its admin-audit entry records it (docs/preview-and-simulation.md). */
export interface PreviewAuditEntry {
  user_id: string
  datasource_id: string
  sql: string
  executed: boolean
}

/** What a what-if simulation replayed, as its admin-audit entry records it. */
export interface SimulationAuditEntry {
  datasource_id: string
  changes: Record<string, unknown>
  window: Record<string, unknown>
  summary: Record<string, unknown>
}

/**
 * Admin actions that change nothing but are audited all the same: an admin who previews a
 * user's session reads through that user's policies, which is worth a record (docs/preview-and-simulation.md).
 */
export class AuditedActions {
  readonly #ctx: StoreContext

  constructor(ctx: StoreContext) {
    this.#ctx = ctx
  }

  /** Records a preview as a `user`/`preview` entry on the previewed user. */
  async preview(actorId: string, entry: PreviewAuditEntry): Promise<void> {
    await this.#ctx.mutate(actorId, async (m) => {
      m.audit('user', entry.user_id, 'preview', { ...entry })
    })
  }

  /** Records a what-if simulation as a `datasource`/`simulate` entry on its datasource. */
  async simulation(actorId: string, entry: SimulationAuditEntry): Promise<void> {
    await this.#ctx.mutate(actorId, async (m) => {
      m.audit('datasource', entry.datasource_id, 'simulate', { ...entry })
    })
  }
}
