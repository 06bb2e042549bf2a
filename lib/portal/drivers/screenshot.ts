import type { Page } from 'playwright-core';

/** Inputs whose values are secrets: passwords, and one-time codes (valid for a minute, still a credential). */
const SECRET_INPUTS = 'input[type="password"], input[autocomplete="one-time-code"]';

/**
 * A full-page PNG with every secret input emptied first and masked in the image as well: the
 * value is gone from the page before the capture, and the box it sat in is painted over, so
 * neither dots nor a length show.
 */
export const maskedScreenshot = async (page: Page): Promise<Buffer> => {
  const secrets = page.locator(SECRET_INPUTS);
  await secrets.evaluateAll((inputs) => {
    for (const input of inputs) (input as unknown as { value: string }).value = '';
  });
  return page.screenshot({ type: 'png', fullPage: true, mask: [secrets], animations: 'disabled', caret: 'hide' });
};
