import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
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

export class RefusedDestinationError extends Error {
  readonly code = 'EREFUSEDDESTINATION';
  constructor(readonly reason: string) {
    super(CONNECTION_REFUSED);
    this.name = 'RefusedDestinationError';
  }
}

/** A URL's host without IPv6 brackets. */
const hostOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, '$1');

/**
 * Whether a URL may be used as a destination, checked when it is set: the scheme, and every address
 * its host resolves to (a name that resolves to a private address is refused like the address). A
 * name that does not resolve yet is accepted: delivery checks every connection again (see
 * `guardedAgents`), which is what holds when DNS answers differently later.
 * Resolves to the reason for a refusal, or null.
 */
export async function checkDestination(
  raw: string,
  policy: OutboundPolicy,
  resolve: (host: string) => Promise<{ address: string }[]> = (host) => dns.promises.lookup(host, { all: true, verbatim: true }),
): Promise<string | null> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'not a URL';
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowHttp)) return policy.allowHttp ? 'an http or https URL is required' : 'an https URL is required';
  if (url.username || url.password) return 'credentials in the URL are not allowed';
  const host = hostOf(url);
  if (ipaddr.isValid(host)) return refusedAddress(host, policy) && 'its address is not a public one';
  let addresses: { address: string }[];
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
function guardedLookup(policy: OutboundPolicy): LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const list = addresses as dns.LookupAddress[];
      const refused = list.map((a) => refusedAddress(a.address, policy)).find((r) => r !== null);
      if (refused || !list.length) return callback(new RefusedDestinationError(refused ?? 'no address'), '', 0);
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, list);
      callback(null, list[0].address, list[0].family);
    });
  };
}

/**
 * http and https agents for requests to customer-chosen URLs: names go through the guarded lookup;
 * an IP literal (which Node connects to without a lookup) is checked by `checkLiteral` first.
 */
export function guardedAgents(policy: OutboundPolicy, opts: http.AgentOptions = {}) {
  const lookup = guardedLookup(policy);
  return { httpAgent: new http.Agent({ ...opts, lookup }), httpsAgent: new https.Agent({ ...opts, lookup }) };
}

/** Throws RefusedDestinationError for a URL whose host is a refused IP literal (or a refused scheme). */
export function checkLiteral(raw: string, policy: OutboundPolicy): void {
  const url = new URL(raw);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowHttp)) throw new RefusedDestinationError(`${url.protocol} not allowed`);
  const host = hostOf(url);
  if (ipaddr.isValid(host)) {
    const refused = refusedAddress(host, policy);
    if (refused) throw new RefusedDestinationError(refused);
  }
}
