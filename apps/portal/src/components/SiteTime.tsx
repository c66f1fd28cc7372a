import { atSite } from '../format';

/** A date-time in its site's zone (UTC until the site has one), the UTC instant on hover; `seconds`: to the second. */
export function SiteTime({ iso, zone, seconds }: { iso: string | null | undefined; zone: string | null | undefined; seconds?: boolean }) {
  const t = atSite(iso, zone, { seconds });
  return iso ? (
    <time dateTime={iso} title={t.utc}>
      {t.text}
    </time>
  ) : (
    <>{t.text}</>
  );
}
