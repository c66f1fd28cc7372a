import { useEffect, useState } from 'react';
import { LayoutNode, portalApi } from '../api';

/** The company's sites' time zones (from its layout) and the property's: the one zone all its sites share, else none (UTC, labelled). */
export interface SiteZones {
  /** A site's IANA zone; null while it has none. */
  of: (siteId: string | null | undefined) => string | null;
  /** The zone every site shares; null when a site has none or they differ (the pages then say UTC). */
  property: string | null;
  loaded: boolean;
}

/** A day (YYYY-MM-DD) as read in `zone` (UTC when null). */
export const dayIn = (at: Date, zone: string | null) =>
  new Intl.DateTimeFormat('en-CA', { timeZone: zone ?? 'UTC', year: 'numeric', month: '2-digit', day: '2-digit' }).format(at);

/** The zones of the session's company's sites: one read of the layout per page. A layout that cannot be read leaves every time in UTC. */
export function useSiteZones(): SiteZones {
  const [zones, setZones] = useState<Map<string, string | null> | null>(null);
  useEffect(() => {
    let live = true;
    portalApi.layout().then(
      (layout) => {
        const sites = layout.nodes.filter((n) => n.level === 'site') as (LayoutNode & { time_zone?: string | null })[];
        if (live) setZones(new Map(sites.map((s) => [s._id, s.time_zone ?? null])));
      },
      () => live && setZones(new Map()),
    );
    return () => {
      live = false;
    };
  }, []);
  const all = [...(zones?.values() ?? [])];
  const property = all.length > 0 && all.every((z) => z && z === all[0]) ? all[0] : null;
  return { of: (siteId) => (siteId ? (zones?.get(siteId) ?? null) : null), property, loaded: zones !== null };
}
