/**
 * A module-scope client created on its first call rather than at import: for clients a function
 * needs on some requests only (the Secrets Manager of a cursor key, KMS for a secret, Step
 * Functions for a start), so a cold start that never calls them does not construct them.
 */
// biome-ignore lint/suspicious/noExplicitAny: any client's overloaded send
export const lazyClient = <Client extends { send: (...args: any[]) => any }>(
  create: () => Client,
): Pick<Client, 'send'> => {
  let client: Client | undefined;
  const send = (...args: Parameters<Client['send']>) => {
    client ??= create();
    return client.send(...args);
  };
  return { send: send as Client['send'] };
};
