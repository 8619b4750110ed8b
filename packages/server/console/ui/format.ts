import type { Assignment } from '../types'

/** `datetime-local` text (the browser's zone) to an ISO instant, or undefined when blank. */
export function instant(local: string): string | undefined {
  return local ? new Date(local).toISOString() : undefined
}

/** Who an assignment reaches, as the lists show it. */
export function assignmentScope(a: Assignment): string {
  if (a.scope === 'all') return 'all users'
  return a.scope === 'user' ? `user ${a.username}` : `role ${a.role_name}`
}
