import http from 'node:http';
import net, { AddressInfo } from 'node:net';
import axios from 'axios';
import { Resolve, checkDestination, guardedAgents, refusedAddress } from './outbound';

const production = { allowLoopback: false, allowHttp: false };
const development = { allowLoopback: true, allowHttp: true };
/** A DNS server's answers, as the resolver the checks are given. */
const resolvesTo =
  (...addresses: string[]): Resolve =>
  async () =>
    addresses.map((address) => ({ address, family: net.isIP(address) }));

describe('outbound destinations (callback URLs)', () => {
  it.each([
    ['169.254.169.254', 'linkLocal'],
    ['10.1.2.3', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.0.1', 'private'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['127.0.0.1', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.251', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'linkLocal'],
    ['fd12:3456::1', 'uniqueLocal'],
    ['ff02::1', 'multicast'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['64:ff9b::a9fe:a9fe', 'rfc6052'],
  ])('refuses %s (%s) in production', (address, range) => {
    expect(refusedAddress(address, production)).toBe(`${range} address`);
  });

  it('allows public unicast, and loopback only with the development switch (never private or link-local)', () => {
    for (const a of ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c', '::ffff:93.184.215.14']) expect(refusedAddress(a, production)).toBeNull();
    expect(refusedAddress('127.0.0.1', development)).toBeNull();
    expect(refusedAddress('::1', development)).toBeNull();
    for (const a of ['10.0.0.1', '169.254.169.254', 'fe80::1']) expect(refusedAddress(a, development)).not.toBeNull();
  });

  it('checks the scheme and every address a name resolves to when the URL is set', async () => {
    expect(await checkDestination('http://pms.example/hooks', production, resolvesTo('93.184.215.14'))).toBe('an https URL is required');
    expect(await checkDestination('https://pms.example/hooks', production, resolvesTo('93.184.215.14'))).toBeNull();
    // one internal answer among public ones is enough to refuse
    expect(await checkDestination('https://rebind.example/hooks', production, resolvesTo('93.184.215.14', '10.0.0.7'))).toMatch(/not a public one/);
    expect(await checkDestination('https://localhost/hooks', production, resolvesTo('127.0.0.1'))).toMatch(/not a public one/);
    expect(await checkDestination('http://localhost/hooks', development, resolvesTo('127.0.0.1'))).toBeNull();
    expect(await checkDestination('https://[::ffff:169.254.169.254]/x', development)).toMatch(/not a public one/);
    expect(await checkDestination('ftp://pms.example/x', development)).toBe('an http or https URL is required');
    // not resolvable yet: accepted, delivery checks each connection
    expect(await checkDestination('https://new.example/hooks', production, async () => Promise.reject(new Error('ENOTFOUND')))).toBeNull();
  });

  describe('at delivery (the agents check the address actually connected to)', () => {
    let server: http.Server;
    let port: number;
    let connections = 0;
    const made: ReturnType<typeof guardedAgents>[] = [];
    const agents = (...args: Parameters<typeof guardedAgents>) => {
      made.push(guardedAgents(...args));
      return made[made.length - 1];
    };
    /** What a GET through the agents ends with: the body, or the error's code and message. */
    const get = (url: string, a: ReturnType<typeof guardedAgents>) =>
      axios.get(url, { ...a, proxy: false, timeout: 2000 }).then(
        (res) => res.data as string,
        (e: { code?: string; message: string }) => ({ code: e.code, message: e.message }),
      );
    const REFUSED = { code: 'EREFUSEDDESTINATION', message: 'connection refused' };

    beforeAll(async () => {
      server = http.createServer((_req, res) => res.end('ok'));
      server.on('connection', () => connections++);
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
      port = (server.address() as AddressInfo).port;
    });
    beforeEach(() => (connections = 0));
    afterAll(async () => {
      for (const a of made) {
        a.httpAgent.destroy();
        a.httpsAgent.destroy();
      }
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    });

    it('a name resolving to a refused address never gets a connection; with the switch, loopback does', async () => {
      expect(await get(`http://localhost:${port}/`, agents({ allowLoopback: false, allowHttp: true }))).toEqual(REFUSED);
      expect(connections).toBe(0);
      expect(await get(`http://localhost:${port}/`, agents(development))).toBe('ok');
      expect(connections).toBe(1);
    });

    it('an IP literal, which Node connects to without a lookup, is checked in every spelling', async () => {
      const policy = { allowLoopback: false, allowHttp: true };
      for (const host of ['127.0.0.1', '[::ffff:7f00:1]', '[::ffff:127.0.0.1]', '0x7f.1', '2130706433', '[::1]', '0.0.0.0']) {
        expect({ host, got: await get(`http://${host}:${port}/`, agents(policy)) }).toEqual({ host, got: REFUSED });
      }
      expect(connections).toBe(0);
    });

    it('DNS rebinding: a name that was public when the URL was set and resolves inside at delivery is refused', async () => {
      let answers = 0;
      // A rebinding DNS server: a public answer first (the set-time check), loopback after.
      const rebinding: Resolve = async (host) => (answers++ === 0 ? resolvesTo('93.184.215.14') : resolvesTo('127.0.0.1'))(host);
      const url = `http://rebind.example:${port}/`;
      expect(await checkDestination(url, { allowLoopback: false, allowHttp: true }, rebinding)).toBeNull();
      expect(await get(url, agents({ allowLoopback: false, allowHttp: true }, {}, rebinding))).toEqual(REFUSED);
      // one internal address among public ones is refused too: the connection could pick it
      expect(await get(url, agents({ allowLoopback: false, allowHttp: true }, {}, resolvesTo('93.184.215.14', '127.0.0.1')))).toEqual(REFUSED);
      expect(connections).toBe(0);
    });

    it('private and link-local are refused with the development switch on too, before any connection is tried', async () => {
      for (const address of ['10.0.0.7', '169.254.169.254', '192.168.1.1', 'fe80::1', '::ffff:10.0.0.7']) {
        const got = await get(`http://internal.example:${port}/`, agents(development, {}, resolvesTo(address)));
        expect({ address, got }).toEqual({ address, got: REFUSED });
      }
      expect(await get('http://10.0.0.7:9/', agents(development))).toEqual(REFUSED);
      expect(await get('http://[fe80::1]:9/', agents(development))).toEqual(REFUSED);
    });

    it('outside development the http agent opens no connection at all (https only)', async () => {
      expect(await get(`http://localhost:${port}/`, agents({ allowLoopback: true, allowHttp: false }))).toEqual(REFUSED);
      expect(await get(`http://93.184.215.14:${port}/`, agents({ allowLoopback: true, allowHttp: false }))).toEqual(REFUSED);
      expect(connections).toBe(0);
    });
  });
});
