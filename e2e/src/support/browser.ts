import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Browser, Page, chromium } from 'playwright-core';

/** Debian's Chromium (scripts/setup.sh installs the `chromium` package): playwright-core downloads no browser. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Where a browser test writes a screenshot of each page, for people to review. */
const SCREENSHOTS = path.resolve(__dirname, '../../../.data/screenshots');

/**
 * Headless Chromium for tests on a closed network: without the background-networking flags it keeps
 * trying hosts that the network refuses. Each launch has a fresh profile (Playwright's own temporary
 * user data directory) and each context its own cookies.
 */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** A full-page screenshot to .data/screenshots/<name>.png. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}
