// Stands in for readable-stream (a copy of Node's streams for browsers) in deployed bundles: the
// Encryption SDK and duplexify only use Readable, Duplex, Transform, PassThrough, pipeline and
// finished, which Node's own stream module has. process.getBuiltinModule needs no require (Node 22.3+).
const stream = process.getBuiltinModule('node:stream');

const noop = () => {};

module.exports = {
  ...stream,
  // readable-stream's pipeline takes streams without a final callback (errors then only destroy
  // them), Node's requires one; the SDK's encrypt calls it without.
  pipeline: (...streams) =>
    typeof streams.at(-1) === 'function' ? stream.pipeline(...streams) : stream.pipeline(...streams, noop),
};
