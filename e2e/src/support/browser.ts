import { mkdirSync, readFileSync } from 'node:fs';
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
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** A full-page screenshot to .data/screenshots/<name>.png. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/** axe-core (a devDependency), injected into the page under test: the page's policy allows no script of another origin, and none is loaded from one. */
let axeSource: string | undefined;

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/**
 * axe-core's WCAG 2.1 A and AA rules run on the page as it is now: each violation with the elements
 * it names (none: the page passed). Evaluated through the browser's debugging protocol, which the
 * page's Content-Security-Policy does not apply to, so the portal's policy stays as it is.
 */
export async function accessibilityViolations(page: Page): Promise<AxeViolation[]> {
  axeSource ??= readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
  await page.evaluate(axeSource);
  // (A string: this project has no DOM types; it runs in the page.)
  return page.evaluate(`axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } }).then((r) =>
    r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(' ')) })))`) as Promise<AxeViolation[]>;
}
