/**
 * HTML built with a tagged template that escapes every interpolated value unless it is already
 * Html: the portal renders what a driver (or anyone) typed, PHI included, so escaping is the
 * default and markup is the exception.
 */
export class Html {
  constructor(readonly value: string) {}
  toString() {
    return this.value;
  }
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (character) => ENTITIES[character]!);

const render = (value: unknown): string => {
  if (value instanceof Html) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === undefined || value === null || value === false) return '';
  return escapeHtml(String(value));
};

export const html = (strings: TemplateStringsArray, ...values: unknown[]): Html =>
  new Html(strings.reduce((out, text, index) => out + text + (index < values.length ? render(values[index]) : ''), ''));
