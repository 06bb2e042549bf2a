import { APIGatewayClient } from '@aws-sdk/client-api-gateway';

/**
 * The SDK's own API Gateway client and command objects, with `send` taken over: nothing leaves the
 * process (there is no API Gateway emulator). `sent` records each command; `outcome` answers it.
 */
export const clientSending = (outcome: (command: unknown) => Promise<unknown>) => {
  const sent: unknown[] = [];
  const client = new APIGatewayClient({ region: 'us-east-1' });
  client.send = ((command: unknown) => {
    sent.push(command);
    return outcome(command);
  }) as APIGatewayClient['send'];
  return { client, sent };
};
