import axios, { AxiosInstance } from 'axios';
import { createHash } from 'node:crypto';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchSystem, System, waitFor } from '@smartlock/testing';
import { accessibilityViolations, launchBrowser, screenshot } from './support/browser';

/**
 * Issue 52's "Done when", in Chromium against the whole system: a property company connects its
 * TTLock account and its Nuki account in the portal, sees their locks appear, binds the TTLock lock
 * to a room's door and the Nuki lock to the cabinet of that room's bed, and one booking event gives
 * its guest a TTLock e-key on the door and a Nuki PIN on the cabinet (read back through v4 and from
 * each vendor's simulated cloud). Then the day-to-day: a re-sync, a replaced token, a view-only
 * session, and a disconnection that says which bound lock it unbinds first; and another company
 * that connects the same vendor account can never bind the lock. Screenshots of every
 * state at laptop and phone widths; axe-core's WCAG 2.1 A and AA rules pass on each.
 */

const LAYOUT = { sites: [{ name: 'Harbour', buildings: [{ name: 'A', floors: [{ name: '1', rooms: [{ name: '101', beds: [{ name: 'A' }] }] }] }] }] };
const LAPTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
const ROOM = 'Room Harbour › A › 1 › 101';
const BED = 'Bed Harbour › A › 1 › 101 › A';

describe('lock accounts and locks in the portal (issue 52)', () => {
  let sys: System;
  let browser: Browser;
  let admin: AxiosInstance;
  let sim: AxiosInstance;
  let hotel: string;
  let ttlockUser: string;
  let nukiToken: string;
  let nukiAccountId: number;
  const door = `TT${Date.now() % 1_000_000_000}`;
  const smartlock = String(70_000_000 + (Date.now() % 1_000_000));
  const cabinet = `nuki:${smartlock}`;
  const contexts: BrowserContext[] = [];

  const newPage = async (viewport = LAPTOP, timezoneId?: string): Promise<Page> => {
    const context = await browser.newContext({ viewport, baseURL: sys.baseUrl, ...(timezoneId ? { timezoneId } : {}) });
    contexts.push(context);
    return context.newPage();
  };
  const heading = (page: Page, name: string) => page.getByRole('heading', { level: 1, name });
  const accessible = async (page: Page) => expect(await accessibilityViolations(page)).toEqual([]);
  /** A link opened, then the Locks page from the navigation. */
  const openLocks = async (page: Page, capabilities: string[]) => {
    const { path } = (await admin.post(`/admin/v1/companies/${hotel}/portal-links`, { capabilities })).data as { path: string };
    await page.goto(path);
    await heading(page, 'Overview').waitFor();
    await page.getByRole('navigation', { name: 'Portal' }).getByRole('link', { name: 'Locks' }).click();
    await heading(page, 'Locks').waitFor();
  };
  const announced = (page: Page, text: string) => page.getByRole('status').filter({ hasText: text }).waitFor();

  beforeAll(async () => {
    sys = await launchSystem();
    browser = await launchBrowser();
    admin = axios.create({ baseURL: sys.baseUrl, headers: { Authorization: `Bearer ${sys.adminToken}` } });
    sim = axios.create({ baseURL: `${sys.simUrl}/sim` });
    hotel = (await admin.post('/admin/v1/companies', { name: 'Two Brands Hotel' })).data._id;
    await admin.put(`/admin/v1/companies/${hotel}/layout`, LAYOUT);
    // The company's own accounts at each vendor (the simulator), each holding one lock.
    const form = new URLSearchParams({
      clientId: 'sim-client-id',
      clientSecret: 'sim-client-secret',
      username: `twobrands${Date.now().toString(36)}`,
      password: createHash('md5').update('tt-secret-1').digest('hex'),
      date: String(Date.now()),
    });
    ttlockUser = (await axios.post(`${sys.simUrl}/v3/user/register`, form)).data.username;
    await sim.put(`/locks/${door}`, { owner: ttlockUser, name: 'Door 101' });
    const nuki = (await sim.post('/nuki/accounts', { name: 'Cabinets' })).data as { accountId: number; apiToken: string };
    nukiToken = nuki.apiToken;
    nukiAccountId = nuki.accountId;
    await sim.put(`/nuki/smartlocks/${smartlock}`, { apiToken: nukiToken, name: 'Cabinet 101A', batteryCharge: 18, batteryCritical: true });
  }, 120_000);

  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => undefined);
    await browser?.close();
    await sys?.stop();
  });

  it('connects a TTLock and a Nuki account, sees their locks appear, and binds them to the door of room 101 and the cabinet of its bed A', async () => {
    const page = await newPage();
    await openLocks(page, ['layout']);
    await page.getByText('No lock account connected yet.').waitFor();
    await screenshot(page, 'portal-locks-empty');
    await accessible(page);

    await page.getByLabel('TTLock username').fill(ttlockUser);
    await page.getByLabel('TTLock password').fill('tt-secret-1');
    await page.getByRole('button', { name: 'Connect TTLock account' }).click();
    await announced(page, `TTLock account “${ttlockUser}” connected: 1 lock found.`);

    await page.getByRole('radio', { name: 'Nuki' }).check();
    await page.getByLabel('Name for this account').fill('Cabinets');
    await page.getByLabel('Nuki API token').fill(nukiToken);
    await page.getByRole('button', { name: 'Connect Nuki account' }).click();
    await announced(page, 'Nuki account “Cabinets” connected: 1 lock found.');

    // The list is read again after the announcement: wait for each account's row, connected.
    const accounts = page.getByTestId('lock-accounts');
    await accounts
      .getByRole('row', { name: new RegExp(ttlockUser) })
      .getByText('connected')
      .waitFor();
    await accounts
      .getByRole('row', { name: /Cabinets/ })
      .getByText('connected')
      .waitFor();
    expect(await accounts.getByRole('row').count()).toBe(3);
    const locks = page.getByTestId('locks');
    const doorRow = locks.getByRole('row', { name: new RegExp(door) });
    const cabinetRow = locks.getByRole('row', { name: new RegExp(cabinet) });
    expect(await doorRow.innerText()).toMatch(new RegExp(`Door 101[\\s\\S]*TTLock[\\s\\S]*${ttlockUser} \\(TTLock\\)[\\s\\S]*Not bound`));
    expect(await cabinetRow.innerText()).toMatch(/Cabinet 101A[\s\S]*Nuki[\s\S]*Cabinets \(Nuki\)[\s\S]*18 %, low: replace soon[\s\S]*Not bound/);
    await screenshot(page, 'portal-locks-connected');

    await page.getByLabel(`Room or bed for lock ${door}`).selectOption({ label: ROOM });
    await page.getByRole('button', { name: `Bind lock ${door}` }).click();
    await announced(page, `Lock ${door} bound to room Harbour › A › 1 › 101 (its door).`);
    await page.getByLabel(`Room or bed for lock ${cabinet}`).selectOption({ label: BED });
    await page.getByRole('button', { name: `Bind lock ${cabinet}` }).click();
    await announced(page, `Lock ${cabinet} bound to bed Harbour › A › 1 › 101 › A (its cabinet).`);
    await doorRow.getByText(`${ROOM} (door)`).waitFor();
    await cabinetRow.getByText(`${BED} (cabinet)`).waitFor();
    await screenshot(page, 'portal-locks-bound');
    await accessible(page);
    await page.setViewportSize(PHONE);
    await screenshot(page, 'portal-locks-bound-phone');
    await accessible(page);

    // The layout holds them as the portal bound them (door on the room, cabinet on the bed), named as the vendor names them.
    const nodes = (await admin.get(`/admin/v1/companies/${hotel}/snapshot`)).data.data.nodes as {
      level: string;
      locks?: { lock_id: string; name: string | null; lockLocationType: string }[];
    }[];
    expect(nodes.find((n) => n.level === 'room')?.locks).toEqual([expect.objectContaining({ lock_id: door, name: 'Door 101', lockLocationType: 'door' })]);
    expect(nodes.find((n) => n.level === 'bed')?.locks).toEqual([
      expect.objectContaining({ lock_id: cabinet, name: 'Cabinet 101A', lockLocationType: 'cabinet' }),
    ]);
  });

  it('one booking event: a TTLock e-key on the door and a Nuki PIN on the cabinet, read back through v4 and held by each lock', async () => {
    const site = (await admin.get(`/admin/v1/companies/${hotel}/snapshot`)).data.data.nodes.find((n: { level: string }) => n.level === 'site')._id as string;
    const ingest = (await admin.post(`/admin/v1/companies/${hotel}/ingest-tokens`, { site_id: site })).data as { path: string };
    const key = (await admin.post(`/admin/v1/companies/${hotel}/api-keys`, { name: 'checker' })).data.key as string;
    const hour = 3_600_000;
    const start = Math.floor(Date.now() / hour) * hour;
    const sent = await axios.post(`${sys.webhookUrl}${ingest.path}`, {
      reference_id: 'TWO-BRANDS-1',
      action: 'create',
      room_number: '101',
      bed: 'A',
      check_in: new Date(start).toISOString(),
      check_out: new Date(start + 48 * hour).toISOString(),
      guest: { name: 'Ada Guest', email: 'ada@guest.example' },
      access_type: ['EKEY', 'PASSCODE'],
    });
    expect(sent.status).toBe(202);
    const event = await waitFor(
      async () => {
        const e = (await axios.get(`${sys.webhookUrl}/webhook/events/${sent.data.eventId}`, { headers: { apikey: key } })).data as {
          status: string;
          message: string | null;
        };
        return ['COMPLETED', 'FAILED', 'DEAD_LETTER'].includes(e.status) ? e : false;
      },
      { timeoutMs: 120_000, what: 'the booking to be provisioned on both locks' },
    );
    expect(event).toMatchObject({ status: 'COMPLETED', message: null });

    type Credential = { type: string; lock: { lockId: string; lockLocationType: string }; lockData?: string | null; passcode?: string | null };
    const v4 = (await axios.get(`${sys.baseUrl}/api/v4/bookings/TWO-BRANDS-1/access`, { headers: { apikey: key } })).data.data as {
      status: string;
      credentials: Credential[];
    };
    expect(v4.status).toBe('active');
    const on = (lockId: string) =>
      v4.credentials
        .filter((c) => c.lock.lockId === lockId)
        .map((c) => c.type)
        .sort();
    // The door is TTLock's: the e-key (and the passcode TTLock holds too); the cabinet is Nuki's: its PIN only (Nuki has no e-key).
    expect(on(door)).toEqual(['EKEY', 'PASSCODE']);
    expect(on(cabinet)).toEqual(['PASSCODE']);
    const ekey = v4.credentials.find((c) => c.lock.lockId === door && c.type === 'EKEY');
    expect(ekey).toMatchObject({ lock: { lockLocationType: 'door' }, lockData: expect.any(String) });
    const pin = v4.credentials.find((c) => c.lock.lockId === cabinet)?.passcode;
    expect(pin).toMatch(/^(?!12)[1-9]{6}$/);

    // Each vendor's cloud holds what v4 says: the e-key opens the TTLock door, the PIN is on the Nuki keypad.
    expect((await axios.post(`${sys.simUrl}/sim/locks/${door}/try`, { lockData: ekey?.lockData })).data).toMatchObject({ opened: true, by: 'ekey' });
    const held = (await sim.get(`/nuki/smartlocks/${smartlock}`)).data.auths as { code: number; onDevice: boolean }[];
    expect(held).toEqual([expect.objectContaining({ code: Number(pin), onDevice: true })]);
    expect((await sim.post(`/nuki/smartlocks/${smartlock}/try`, { code: pin })).data).toMatchObject({ opened: true });

    // The booking's story in the portal shows both credentials, each on its lock.
    const page = await newPage();
    const { path } = (await admin.post(`/admin/v1/companies/${hotel}/portal-links`, { capabilities: ['credentials'] })).data as { path: string };
    await page.goto(path);
    await heading(page, 'Overview').waitFor();
    await page.goto(`${sys.baseUrl}/portal/#/bookings/TWO-BRANDS-1`);
    await page.getByText(cabinet).first().waitFor();
    await page.getByText(door).first().waitFor();
    await screenshot(page, 'portal-locks-booking-story');
  });

  it('re-syncs, replaces a token the vendor no longer takes, shows a view-only session the lists without forms, and disconnects only after saying which bound lock it unbinds', async () => {
    const page = await newPage();
    await openLocks(page, ['layout']);
    await page.getByRole('button', { name: 'Re-sync Cabinets' }).click();
    await announced(page, '“Cabinets” re-synced: 1 lock found.');

    // The owner made a new token in Nuki Web: the next re-sync is refused, the account needs attention until it gets the new one.
    const newToken = `portal-e2e-token-${Date.now()}`;
    await sim.put(`/nuki/accounts/${nukiAccountId}/token`, { apiToken: newToken });
    await page.getByRole('button', { name: 'Re-sync Cabinets' }).click();
    await page.getByRole('alert').filter({ hasText: 'The lock vendor (nuki) refused these credentials' }).waitFor();
    const row = page.getByTestId('lock-accounts').getByRole('row', { name: /Cabinets/ });
    await row.getByText('needs attention').waitFor();
    await screenshot(page, 'portal-locks-needs-attention');
    await accessible(page);
    // The overview says it under "Needs action", with the way to the fix.
    await page.getByRole('navigation', { name: 'Portal' }).getByRole('link', { name: 'Overview' }).click();
    const entry = page.getByTestId('account-needs-attention');
    await entry.waitFor();
    expect(await entry.innerText()).toContain('Lock account Cabinets (nuki): the vendor refused its login (The lock vendor (nuki) refused these credentials)');
    await entry.getByRole('link', { name: 'Give it a new one on the Locks page' }).click();
    await heading(page, 'Locks').waitFor();
    await page.getByRole('button', { name: 'Replace token of Cabinets' }).click();
    await page.getByLabel('New Nuki API token').fill(newToken);
    await page.getByRole('button', { name: 'Save new token' }).click();
    await announced(page, 'API token of “Cabinets” replaced: 1 lock found.');
    await row.getByText('connected').waitFor();

    // View only: the lists, no form nor button that changes anything. A person in New York reads
    // the times that are not a site's in their own zone, named (a site's are in the site's).
    const viewer = await newPage(PHONE, 'America/New_York');
    await openLocks(viewer, ['view']);
    await viewer.getByTestId('locks').getByText(cabinet).waitFor();
    expect(await viewer.getByRole('button', { name: /Connect|Re-sync|Disconnect|Bind|Unbind|Replace/ }).count()).toBe(0);
    expect(await viewer.getByText(/^Signed in until /).innerText()).toMatch(/ EST$/);
    expect(await viewer.getByTestId('lock-accounts').getByRole('row').nth(1).innerText()).toMatch(/ EST\b/);
    await screenshot(viewer, 'portal-locks-view-only-phone');
    await accessible(viewer);

    // Disconnecting an account whose lock is bound: the dialog names the lock and its place, and its button says it unbinds first.
    await page.getByRole('button', { name: 'Disconnect Cabinets' }).click();
    const dialog = page.getByRole('dialog', { name: 'Disconnect “Cabinets”?' });
    await dialog.waitFor();
    expect(await page.evaluate('document.activeElement.textContent')).toBe('Cancel');
    expect(await dialog.innerText()).toContain(`${cabinet} “Cabinet 101A” on bed Harbour › A › 1 › 101 › A`);
    await screenshot(page, 'portal-locks-disconnect-dialog');
    await accessible(page);
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    expect((await admin.get(`/admin/v1/companies/${hotel}/lock-accounts`)).data).toHaveLength(2);

    await page.getByRole('button', { name: 'Disconnect Cabinets' }).click();
    await dialog.getByRole('button', { name: 'Unbind 1 lock and disconnect' }).click();
    await announced(page, '“Cabinets” disconnected: 1 lock released, 1 lock unbound first.');
    await page.getByTestId('locks').getByText(cabinet).waitFor({ state: 'detached' });
    expect((await admin.get(`/admin/v1/companies/${hotel}/lock-accounts`)).data.map((a: { provider: string }) => a.provider)).toEqual(['ttlock']);
    const bed = ((await admin.get(`/admin/v1/companies/${hotel}/snapshot`)).data.data.nodes as { level: string; locks?: unknown[] }[]).find(
      (n) => n.level === 'bed',
    );
    expect(bed?.locks).toEqual([]);
    await page.setViewportSize(PHONE);
    await screenshot(page, 'portal-locks-disconnected-phone');
    await accessible(page);
    await page.setViewportSize(LAPTOP);

    // A lock of the account bound after the dialog opened (here by the operator): nothing is
    // disconnected, and the dialog opens again naming the lock it would now unbind.
    await admin.delete(`/admin/v1/companies/${hotel}/locks/${door}`);
    await page.reload();
    await heading(page, 'Locks').waitFor();
    await page
      .getByTestId('locks')
      .getByRole('row', { name: new RegExp(door) })
      .getByText('Not bound')
      .waitFor();
    await page.getByRole('button', { name: `Disconnect ${ttlockUser}` }).click();
    const plain = page.getByRole('dialog', { name: `Disconnect “${ttlockUser}”?` });
    await plain.getByRole('button', { name: 'Disconnect account' }).waitFor();
    const room = ((await admin.get(`/admin/v1/companies/${hotel}/snapshot`)).data.data.nodes as { level: string; _id: string }[]).find(
      (n) => n.level === 'room',
    );
    await admin.put(`/admin/v1/companies/${hotel}/locks/${door}`, { room_id: room?._id, lock_mac: 'AA:BB:CC:DD:EE:01' });
    await plain.getByRole('button', { name: 'Disconnect account' }).click();
    await plain.getByRole('button', { name: 'Unbind 1 lock and disconnect' }).waitFor();
    expect(await plain.innerText()).toContain(`${door} “Door 101” on room Harbour › A › 1 › 101`);
    await screenshot(page, 'portal-locks-bound-meanwhile');
    await page.keyboard.press('Escape');
    await plain.waitFor({ state: 'detached' });
    await page.getByText(`A lock of “${ttlockUser}” was bound meanwhile: nothing was disconnected.`).waitFor();
    await accessible(page);
    expect((await admin.get(`/admin/v1/companies/${hotel}/lock-accounts`)).data).toHaveLength(1);
  });

  it("another company can never bind this company's lock: connecting the same vendor account finds it held elsewhere (unnamed), and binding it is refused", async () => {
    const other = (await admin.post('/admin/v1/companies', { name: 'Other Hotel' })).data._id as string;
    await admin.put(`/admin/v1/companies/${other}/layout`, LAYOUT);
    const { token } = (await admin.post(`/admin/v1/companies/${other}/portal-links`, { capabilities: ['layout'] })).data as { token: string };
    const opened = await axios.post(`${sys.baseUrl}/portal/api/session`, { token });
    const session = { Cookie: String(opened.headers['set-cookie']?.[0]).split(';')[0], 'X-CSRF-Token': opened.data.csrf_token as string };
    const portal = axios.create({ baseURL: `${sys.baseUrl}/portal/api`, headers: session, validateStatus: () => true });

    const connected = await portal.post('/lock-accounts', { provider: 'ttlock', username: ttlockUser, password: 'tt-secret-1' });
    expect(connected.status).toBe(201);
    expect(connected.data.locks).toEqual([expect.objectContaining({ lock_id: door, held_elsewhere: true })]);
    expect(JSON.stringify(connected.data)).not.toContain(hotel);
    expect((await portal.get('/layout/locks')).data.data.locks).toEqual([]);

    const room = ((await admin.get(`/admin/v1/companies/${other}/snapshot`)).data.data.nodes as { level: string; _id: string }[]).find(
      (n) => n.level === 'room',
    );
    const refused = await portal.put(`/layout/locks/${door}`, { room_id: room?._id });
    expect(refused.status).toBe(409);
    expect(refused.data).toMatchObject({ error: true, message: `Lock ${door} is not one of this company's locks (the operator assigns locks to companies)` });
    expect(JSON.stringify(refused.data)).not.toContain(hotel);
    // Still this company's, still on its door.
    const mine = (await admin.get(`/admin/v1/companies/${hotel}/locks`)).data.data.locks as { lock_id: string; bound_to: { level: string } | null }[];
    expect(mine.find((l) => l.lock_id === door)?.bound_to).toMatchObject({ level: 'room' });
  });
});
