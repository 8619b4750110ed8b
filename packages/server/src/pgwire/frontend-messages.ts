/** Type bytes of the frontend messages the proxy handles once a connection is ready. */
export const Frontend = {
  Query: 0x51,
  Parse: 0x50,
  Bind: 0x42,
  Describe: 0x44,
  Execute: 0x45,
  Close: 0x43,
  Sync: 0x53,
  Flush: 0x48,
  Terminate: 0x58,
  CopyData: 0x64,
  CopyDone: 0x63,
  CopyFail: 0x66,
  FunctionCall: 0x46,
} as const
