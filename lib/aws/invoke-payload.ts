/**
 * A Lambda Invoke answer's payload as a JSON object, read without letting a parser's message (which quotes
 * its input: a password, a token) reach an error or a log; undefined when it is not one.
 */
export const invokePayloadOf = (bytes: Uint8Array | undefined): Record<string, unknown> | undefined => {
  try {
    const value: unknown = JSON.parse(Buffer.from(bytes ?? []).toString('utf8'));
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
};
