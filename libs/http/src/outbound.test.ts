import http from 'node:http';
import { AddressInfo } from 'node:net';
import axios from 'axios';
import { checkDestination, checkLiteral, guardedAgents, refusedAddress } from './outbound';

const production = { allowLoopback: false, allowHttp: false };
const development = { allowLoopback: true, allowHttp: true };

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
    const resolvesTo = (...addresses: string[]) => async () => addresses.map((address) => ({ address }));
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

  it('at delivery: a name resolving to a refused address, or a refused literal, never gets a connection', async () => {
    let connections = 0;
    const server = http.createServer((_req, res) => res.end('ok'));
    server.on('connection', () => connections++);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const { port } = server.address() as AddressInfo;
    try {
      const agents = guardedAgents({ allowLoopback: false, allowHttp: true });
      const err = await axios.get(`http://localhost:${port}/`, { ...agents, proxy: false }).catch((e: unknown) => e as { code?: string; message: string });
      expect(err).toMatchObject({ code: 'EREFUSEDDESTINATION', message: 'connection refused' });
      expect(() => checkLiteral(`http://127.0.0.1:${port}/`, { allowLoopback: false, allowHttp: true })).toThrow('connection refused');
      expect(() => checkLiteral(`http://[::ffff:7f00:1]:${port}/`, { allowLoopback: false, allowHttp: true })).toThrow('connection refused');
      expect(connections).toBe(0);
      const allowed = guardedAgents({ allowLoopback: true, allowHttp: true });
      expect((await axios.get(`http://localhost:${port}/`, { ...allowed, proxy: false })).data).toBe('ok');
      expect(connections).toBe(1);
      for (const a of [agents, allowed]) {
        a.httpAgent.destroy();
        a.httpsAgent.destroy();
      }
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});
