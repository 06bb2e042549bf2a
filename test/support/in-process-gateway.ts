import type { AddressInfo } from 'node:net';
import { routes } from '#lib/routes/route-table';
import { createGateway, type GatewayOptions } from '#local/gateway';
import { ownInvocation } from '#local/invocations';

/**
 * The handlers from source, in this process (the shared stack runs them in global setup's), each call an
 * invocation of its own as the local stack's (local/invocations.ts) where the test turned contexts on.
 */
export const loadSourceHandler = async (module: string) =>
  ownInvocation(
    (await import(/* @vite-ignore */ new URL(`../../functions/${module}.ts`, import.meta.url).href)).handler,
    module,
  );

/**
 * A local gateway over every route, with its handlers in this process, on a free loopback port: for
 * tests that must see the handlers' own output or give the gateway its own settings.
 */
export const startInProcessGateway = async (options: Partial<GatewayOptions> = {}) => {
  const server = createGateway({ routes, loadHandler: loadSourceHandler, ...options });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
};
