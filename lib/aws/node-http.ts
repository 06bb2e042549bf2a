/*
 * `node:http` in the deployed bundles: esbuild aliases the module to this one (BUNDLING in
 * infra/constructs/service-function.ts), which takes it from Node's CommonJS loader. An ESM import of
 * `node:http` makes Node 22 build the module's ESM facade, which reads every export, the lazy getters
 * `WebSocket`, `CloseEvent` and `MessageEvent` among them, and so loads undici: about 25 ms of a cold
 * start (docs/performance.md). Dependencies import it that way: @middy/util's createError (which
 * Middy's multipart parser calls), the SDK's HTTP handler for `http:` endpoints. The same module object,
 * so `instanceof Agent` and a changed `globalAgent` hold as before. Not the undici getters: a bundle that
 * imports one fails to build ("No matching export"), which says to add it here knowingly.
 */
const http = process.getBuiltinModule('node:http');

export default http;
export const {
  METHODS,
  STATUS_CODES,
  Agent,
  ClientRequest,
  IncomingMessage,
  OutgoingMessage,
  Server,
  ServerResponse,
  createServer,
  validateHeaderName,
  validateHeaderValue,
  get,
  request,
  setMaxIdleHTTPParsers,
  maxHeaderSize,
  globalAgent,
} = http;
