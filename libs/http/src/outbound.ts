import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { Duplex } from 'node:stream';
import ipaddr from 'ipaddr.js';

/**
 * Where the service may send a request a customer chose the address of (callback URLs): public
 * unicast addresses only. Link-local (cloud metadata at 169.254.169.254), private, CGNAT, multicast,
 * unspecified, reserved and IPv6's special ranges are refused always, IPv4-mapped IPv6 forms
 * included; loopback only with the development switch.
 */
export interface OutboundPolicy {
  /** Development only: local receivers in tests and the demo. */
  allowLoopback: boolean;
  /** Development only: plain http (else https). */
  allowHttp: boolean;
}

/** The stable text of a refused or failed connection: it never names an address or a port. */
export const CONNECTION_REFUSED = 'connection refused';

/** Why an address may not be connected to, or null when it may. */
export function refusedAddress(address: string, policy: OutboundPolicy): string | null {
  if (!ipaddr.isValid(address)) return 'not an IP address';
  // process(): an IPv4-mapped IPv6 address (::ffff:10.0.0.1) is judged as the IPv4 address it is.
  const range = ipaddr.process(address).range();
  if (range === 'unicast') return null;
  if (range === 'loopback' && policy.allowLoopback) return null;
  return `${range} address`;
}

class RefusedDestinationError extends Error {
  readonly code = 'EREFUSEDDESTINATION';
  constructor(readonly reason: string) {
    super(CONNECTION_REFUSED);
    this.name = 'RefusedDestinationError';
  }
}

/** A URL's host without IPv6 brackets. */
const hostOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, '$1');

/** Every address a host name resolves to (injectable: tests answer as a rebinding DNS server would). */
export type Resolve = (host: string) => Promise<dns.LookupAddress[]>;
const systemResolve: Resolve = (host) => dns.promises.lookup(host, { all: true, verbatim: true });

/**
 * Whether a URL may be used as a destination, checked when it is set: the scheme, and every address
 * its host resolves to (a name that resolves to a private address is refused like the address). A
 * name that does not resolve yet is accepted: delivery checks every connection again (see
 * `guardedAgents`), which is what holds when DNS answers differently later.
 * Resolves to the reason for a refusal, or null. The reason never names a resolved address.
 */
export async function checkDestination(raw: string, policy: OutboundPolicy, resolve: Resolve = systemResolve): Promise<string | null> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'not a URL';
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowHttp))
    return policy.allowHttp ? 'an http or https URL is required' : 'an https URL is required';
  if (url.username || url.password) return 'credentials in the URL are not allowed';
  const host = hostOf(url);
  if (ipaddr.isValid(host)) return refusedAddress(host, policy) && 'its address is not a public one';
  let addresses: dns.LookupAddress[];
  try {
    addresses = await resolve(host);
  } catch {
    return null;
  }
  return addresses.some((a) => refusedAddress(a.address, policy)) ? 'its host name resolves to an address that is not a public one' : null;
}

/**
 * The lookup the agents connect with: every address the name resolves to is checked, and the one
 * connected to is one of them, so a name that changes its answer between the check at set time and
 * the connection (DNS rebinding) is still refused.
 */
function guardedLookup(policy: OutboundPolicy, resolve: Resolve): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (all) => {
        const list = options.family === 4 || options.family === 6 ? all.filter((a) => a.family === options.family) : all;
        const refused = list.map((a) => refusedAddress(a.address, policy)).find((r) => r !== null);
        if (refused || !list.length) return callback(new RefusedDestinationError(refused ?? 'no address'), '', 0);
        if (options.all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, list);
        callback(null, list[0].address, list[0].family);
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    );
  };
}

/** Why an agent may not open this connection: Node connects to an IP literal without a lookup. */
function refusedConnection(host: string | null | undefined, policy: OutboundPolicy, scheme: 'http' | 'https'): string | null {
  if (scheme === 'http' && !policy.allowHttp) return 'http not allowed';
  return host && ipaddr.isValid(host) ? refusedAddress(host, policy) : null;
}

/**
 * http and https agents for requests to customer-chosen URLs, the one place the policy holds at
 * delivery: names go through the guarded lookup, IP literals (in any spelling the URL parser
 * accepts) are checked before the socket is made, and the http agent refuses everything outside
 * development. A refusal fails the request with RefusedDestinationError ('connection refused').
 */
export function guardedAgents(policy: OutboundPolicy, opts: http.AgentOptions = {}, resolve: Resolve = systemResolve) {
  const lookup = guardedLookup(policy, resolve);
  type Callback = (err: Error | null, stream: Duplex) => void;
  // Node's Agent passes a callback: the refusal goes to it and fails the request, with no socket made.
  const refuse = (reason: string, callback?: Callback) => {
    const err = new RefusedDestinationError(reason);
    if (!callback) throw err;
    callback(err, undefined as unknown as Duplex);
    return undefined;
  };
  class HttpAgent extends http.Agent {
    override createConnection(options: http.ClientRequestArgs, callback?: Callback) {
      const refused = refusedConnection(options.host, policy, 'http');
      return refused ? refuse(refused, callback) : super.createConnection(options, callback);
    }
  }
  class HttpsAgent extends https.Agent {
    override createConnection(options: https.RequestOptions, callback?: Callback) {
      const refused = refusedConnection(options.host, policy, 'https');
      return refused ? refuse(refused, callback) : super.createConnection(options, callback);
    }
  }
  return { httpAgent: new HttpAgent({ ...opts, lookup }), httpsAgent: new HttpsAgent({ ...opts, lookup }) };
}
