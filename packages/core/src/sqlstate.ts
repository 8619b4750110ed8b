/**
 * The SQLSTATE codes Palisade raises itself, named as in PostgreSQL's errcodes appendix.
 * @see https://www.postgresql.org/docs/current/errcodes-appendix.html
 */
export const SqlState = {
  ReadOnlySqlTransaction: '25006',
  InsufficientPrivilege: '42501',
  FeatureNotSupported: '0A000',
  SyntaxError: '42601',
  UndefinedTable: '42P01',
  UndefinedColumn: '42703',
  UndefinedFunction: '42883',
  UndefinedObject: '42704',
  WrongObjectType: '42809',
  InvalidSchemaName: '3F000',
  InvalidName: '42602',
  InvalidParameterValue: '22023',
  InvalidEscapeSequence: '22025',
  ProgramLimitExceeded: '54000',
  StatementTooComplex: '54001',
  ProtocolViolation: '08P01',
  ConnectionFailure: '08006',
  InternalError: 'XX000',
} as const

export type SqlState = (typeof SqlState)[keyof typeof SqlState]
