import { LocationLevel } from '@smartlock/contracts';

export { nameProblem } from '@smartlock/contracts';
const EXTERNAL_ID_MAX = 100;
export { OBJECT_ID } from '@smartlock/http';

export function externalIdProblem(value: unknown): string | undefined {
  if (value === null) return undefined;
  if (typeof value !== 'string') return 'external_id must be a string or null';
  if (value.length === 0 || value.length > EXTERNAL_ID_MAX) return `external_id must be 1 to ${EXTERNAL_ID_MAX} characters`;
  if (/[\u0000-\u001f\u007f]/.test(value)) return 'external_id must not contain control characters'; // eslint-disable-line no-control-regex
  return undefined;
}

/** Sibling names are unique case-insensitively. */
export function nameKey(name: string): string {
  return name.toLowerCase();
}

/**
 * Sort key of one name: case-insensitive and numeric-aware ("Room 2" before "Room 10"), with the
 * lower-cased name as tie-break so the order is total. A path key joins its levels with \u0001, which
 * sorts below every character a name may contain, so sorting path keys sorts by site, building,
 * floor, room, bed, and the nodes under one ancestor are the keys starting with `ancestorKey + \u0001`.
 */
export function sortComponent(name: string): string {
  const lower = name.toLowerCase();
  return `${lower.replace(/\d+/g, (d) => (d.length < 16 ? d.padStart(16, '0') : d))}\u0002${lower}`;
}

export const KEY_SEP = '\u0001';

export const PLURALS: Record<string, LocationLevel> = {
  sites: 'site',
  buildings: 'building',
  floors: 'floor',
  rooms: 'room',
  beds: 'bed',
};

export const PARENT_LEVEL: Record<LocationLevel, LocationLevel | null> = {
  site: null,
  building: 'site',
  floor: 'building',
  room: 'floor',
  bed: 'room',
};

export const LEVEL_DEPTH: Record<LocationLevel, number> = { site: 0, building: 1, floor: 2, room: 3, bed: 4 };
