import { contractViolations } from './contract';

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * contract.ts's check for every `fetch` of the test process (the typed client of libs/client uses
 * fetch): a response from a registered host that breaks the contract fails the call that received
 * it, and so does a request body the host accepted but the document refuses.
 */
export function enforceContractOnFetch(): void {
  const original = globalThis.fetch;
  globalThis.fetch = async (input, init) => {
    const request = new Request(input, init);
    const sent = request.body ? await request.clone().text() : undefined;
    const response = await original(request);
    const violations = contractViolations({
      method: request.method,
      url: request.url,
      status: response.status,
      requestBody: sent === undefined || sent === '' ? undefined : parseJson(sent),
      responseBody: parseJson(await response.clone().text()),
      contentType: response.headers.get('content-type') ?? '',
    });
    if (violations.length) throw new Error(`contract: ${violations.join('\n')}`);
    return response;
  };
}
