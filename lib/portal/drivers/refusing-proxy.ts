import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';

/**
 * The proxy a portal's browser context sends everything to that is not for the portal's own
 * origins (those bypass it: portal-context.ts), and that refuses all of it: no connection is ever
 * made onward, no name is resolved. It catches what the context's route filter is not shown: a
 * redirect's next hop (a portal answering `307 Location: https://elsewhere/` to the sign-in POST
 * would otherwise have the browser post the password there), WebSockets, and WebRTC's TCP (the
 * browser sends no UDP around the proxy: browser.ts).
 *
 * Written on node:http rather than with a proxy library (proxy-chain was tried): it forwards
 * nothing, so the only code it needs is the refusal, and a library's forwarding would be code in
 * the path of the portal's traffic for nothing.
 */
export interface RefusingProxy {
  /** For Playwright's `proxy.server`. */
  server: string;
  close(): Promise<void>;
}

const FORBIDDEN = 'HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Length: 0\r\n\r\n';

/** Starts the proxy on loopback. */
export const startRefusingProxy = async (): Promise<RefusingProxy> => {
  const refuseSocket = (_request: IncomingMessage, socket: Duplex) => {
    socket.on('error', () => undefined);
    socket.end(FORBIDDEN);
  };
  const server = createServer((_request, response) => {
    response.writeHead(403, { connection: 'close', 'content-length': '0' });
    response.end();
  });
  // CONNECT (https, wss, WebRTC over TCP) and Upgrade (ws): refused the same way, on the raw socket.
  server.on('connect', refuseSocket);
  server.on('upgrade', refuseSocket);
  server.on('clientError', (_error, socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    server: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
};
