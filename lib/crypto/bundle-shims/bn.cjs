'use strict';
/*
 * Stands in for bn.js in deployed bundles: the part of its API the Encryption SDK calls, on BigInt.
 * Non-signing suites only use it to write and read a frame's 8-byte content length (serialize's
 * aad_factory and decode_body_header); the elliptic-curve point code (material-management's
 * ecc_encode, ecc_decode) builds its curve constants with it at import and only runs for signing
 * suites. Every method here matches bn.js for non-negative integers (test/unit/crypto-bundle-shims.test.ts);
 * anything else the SDK never calls, and is absent.
 */
const bytesOf = (bytes, endian) => {
  const ordered = endian === 'le' ? [...bytes].reverse() : [...bytes];
  return ordered.reduce((value, byte) => (value << 8n) | BigInt(byte & 0xff), 0n);
};

const toBigInt = (value, base, endian) => {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new Error('Assertion failed');
    return BigInt(value);
  }
  if (typeof value === 'string') {
    if (base !== 16) throw new Error('bn.js stand-in: only base-16 strings');
    return BigInt(`0x${value || '0'}`);
  }
  if (value instanceof BN) return value.value;
  return bytesOf(value, endian);
};

const modPow = (base, exponent, modulus) => {
  let result = 1n;
  let square = base % modulus;
  for (let rest = exponent; rest > 0n; rest >>= 1n) {
    if (rest & 1n) result = (result * square) % modulus;
    square = (square * square) % modulus;
  }
  return result;
};

class BN {
  constructor(value, base, endian) {
    this.value = toBigInt(value, base, endian);
    if (this.value < 0n) throw new Error('bn.js stand-in: only non-negative integers');
  }
  static mont(modulus) {
    return { modulus: modulus.value };
  }
  static isBN(value) {
    return value instanceof BN;
  }
  add(other) {
    return new BN(this.value + other.value);
  }
  sub(other) {
    return new BN(this.value - other.value);
  }
  mul(other) {
    return new BN(this.value * other.value);
  }
  div(other) {
    return new BN(this.value / other.value);
  }
  mod(other) {
    return new BN(this.value % other.value);
  }
  pow(other) {
    return new BN(this.value ** other.value);
  }
  eq(other) {
    return this.value === other.value;
  }
  bitLength() {
    return this.value.toString(2).length - (this.value === 0n ? 1 : 0);
  }
  byteLength() {
    return Math.ceil(this.bitLength() / 8);
  }
  toNumber() {
    if (this.value > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error('Number can only safely store up to 53 bits');
    return Number(this.value);
  }
  toArray(endian, length) {
    const byteLength = Math.max(1, this.byteLength());
    const size = length ?? byteLength;
    if (byteLength > size) throw new Error('byte array longer than desired length');
    const bytes = new Array(size).fill(0);
    let rest = this.value;
    for (let index = size - 1; index >= 0 && rest > 0n; index--, rest >>= 8n) bytes[index] = Number(rest & 0xffn);
    return endian === 'le' ? bytes.reverse() : bytes;
  }
  /** Montgomery form is bn.js's speed-up; the values are the same, so the context only keeps the modulus. */
  toRed(context) {
    const reduced = new BN(this.value % context.modulus);
    reduced.red = context;
    return reduced;
  }
  redPow(exponent) {
    const power = new BN(modPow(this.value, exponent.value, this.red.modulus));
    power.red = this.red;
    return power;
  }
  fromRed() {
    return new BN(this.value);
  }
}

module.exports = BN;
