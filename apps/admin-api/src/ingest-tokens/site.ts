import { httpSnapshotFetcher } from '@smartlock/layout';
import { HttpError } from '@smartlock/http';
import type { Logger } from '@smartlock/observability';

export const siteNotFound = (site: string) => `Site ${site} not found in the company's layout`;
export const LAYOUT_UNREADABLE = "The company's layout cannot be read now, so the site cannot be checked: try again shortly";

/**
 * The `_id` of the company's site named by `_id` or external id, from location-api's snapshot of the
 * layout (issuing a token is rare; the snapshot is the one admin read location-api offers). A token
 * is issued only for a site of the company: a token naming another company's site would let its
 * holder book into a layout that is not theirs. If the layout cannot be read, nothing is issued
 * (503), rather than a token whose site nobody checked.
 */
export function siteLookup(locationApiUrl: string, adminToken: string, logger: Logger) {
  const fetchSnapshot = httpSnapshotFetcher(locationApiUrl, adminToken, 10_000);
  return async (companyId: string, site: string): Promise<string | null> => {
    let nodes;
    try {
      nodes = (await fetchSnapshot(companyId)).nodes;
    } catch (err) {
      logger.warn('layout not readable: ingest token not issued', { companyId, err: (err as Error).message });
      throw new HttpError(503, LAYOUT_UNREADABLE);
    }
    const found = nodes.find((n) => n.level === 'site' && n._id === site) ?? nodes.find((n) => n.level === 'site' && n.external_id === site);
    return found ? found._id : null;
  };
}
