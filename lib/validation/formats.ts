import { fullFormats } from 'ajv-formats/dist/formats.js';

/**
 * String formats used by the schemas. The compiled validators import this module (see
 * scripts/compile-schemas.ts), so a format is defined once for build and run time.
 */

/** NPI check digit: Luhn over the 9 leading digits prefixed by the card-issuer prefix 80840. */
export const isValidNpi = (value: string): boolean => {
  if (!/^\d{10}$/.test(value)) return false;
  const digits = `80840${value}`;
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let digit = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
};

const formats = {
  date: fullFormats.date,
  'date-time': fullFormats['date-time'],
  email: fullFormats.email,
  npi: isValidNpi,
};

export default formats;
