import { atSite } from '../format';

/** A stay's date-time in its site's zone, the UTC instant on hover. */
export function SiteTime({ iso, zone }: { iso: string | null | undefined; zone: string | null | undefined }) {
  const t = atSite(iso, zone);
  return iso ? (
    <time dateTime={iso} title={t.utc}>
      {t.text}
    </time>
  ) : (
    <>{t.text}</>
  );
}
