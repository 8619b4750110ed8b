/** SQLSTATE codes the data plane raises itself, beyond those of `@palisade/core`. */
export const WireSqlState = {
  ProtocolViolation: '08P01',
  CharacterNotInRepertoire: '22021',
  ConnectionFailure: '08006',
  InvalidPassword: '28P01',
  InvalidAuthorization: '28000',
  InvalidCatalogName: '3D000',
  TooManyConnections: '53300',
  ProgramLimitExceeded: '54000',
  StatementTooComplex: '54001',
  AdminShutdown: '57P01',
  IdleSessionTimeout: '57P05',
  QueryCanceled: '57014',
  InvalidSqlStatementName: '26000',
  InvalidCursorName: '34000',
  ObjectNotInPrerequisiteState: '55000',
  DuplicatePreparedStatement: '42P05',
  SyntaxError: '42601',
  FeatureNotSupported: '0A000',
  InternalError: 'XX000',
} as const

/** The fields of an ErrorResponse the data plane sends (S, V, C, M, D, H). */
export interface WireErrorFields {
  severity: string
  code: string
  message: string
  detail?: string | undefined
  hint?: string | undefined
}

/**
 * An error answered to the client as an ErrorResponse. FATAL errors close the connection after
 * the message is sent; ERROR ends the current statement only.
 */
export class WireError extends Error {
  readonly fields: WireErrorFields

  constructor(fields: WireErrorFields) {
    super(fields.message)
    this.name = 'WireError'
    this.fields = fields
  }

  /** True when the connection must close after this error. */
  get fatal(): boolean {
    return this.fields.severity === 'FATAL'
  }

  /** A FATAL error. */
  static fatal(code: string, message: string): WireError {
    return new WireError({ severity: 'FATAL', code, message })
  }

  /** An ERROR that ends the statement. */
  static error(code: string, message: string): WireError {
    return new WireError({ severity: 'ERROR', code, message })
  }
}
