/** An error raised in the sandbox, with the source position when QuickJS gives one. */
export interface SandboxError {
  message: string
  line?: number
  column?: number
}

/** Tells an error answer from a successful one. */
export function isSandboxError(value: unknown): value is SandboxError {
  return typeof value === 'object' && value !== null && 'message' in value
}
