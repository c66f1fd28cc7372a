import { AccessRule, RULE_LEVELS, RuleLevel } from '@smartlock/contracts';

/**
 * SPEC "Create access for an employee": rules over the location hierarchy, resolved to the rooms and
 * beds they grant. Pure: the layout comes in as SPEC's location rows (one per site → bed path; no bed
 * for a door-only room).
 */
export interface Named {
  name: string;
  _id: string;
}

export interface LocationRow {
  site: Named;
  building: Named;
  floor: Named;
  room: Named;
  bed?: Named | null;
}

const LEVELS = RULE_LEVELS;
export type Level = RuleLevel;
export type Rule = AccessRule;

export interface Grant {
  site: Named;
  room: Named;
  /** null: the room itself (its door), no bed. */
  bed: Named | null;
}

export interface RuleProblem {
  path: string[];
  message: string;
}

const FIELD: Record<Level, keyof LocationRow> = { site_id: 'site', building_id: 'building', floor_id: 'floor', room_id: 'room', bed_id: 'bed' };
const LEVEL_NAME: Record<Level, string> = { site_id: 'site', building_id: 'building', floor_id: 'floor', room_id: 'room', bed_id: 'bed' };

/**
 * One rule, as a filter plus a depth:
 * - a concrete id at a level keeps only what lies under (or is) that node;
 * - `*` at a level grants everything at that level and below: with a `*` at room level or above, the
 *   rooms and all their beds; with `*` only at bed level, the beds and not the room itself;
 * - without `*`, the deepest id decides: a bed (rule 4), or a room and none of its beds (rule 3);
 *   a rule whose deepest id is a site, building or floor grants no room and is refused (locks are
 *   bound to rooms and beds: add `*` or a deeper id).
 * Omitted levels are not considered (rule 1); several rules are combined by the caller (rule 5).
 */
function resolveRule(rule: Rule, rows: LocationRow[]): Grant[] | string {
  const given = LEVELS.filter((l) => rule[l] !== undefined);
  const wild = given.filter((l) => rule[l] === '*');
  const concrete = given.filter((l) => rule[l] !== '*');
  const matching = rows.filter((row) => concrete.every((l) => (row[FIELD[l]] as Named | undefined | null)?._id === rule[l]));

  let rooms: boolean;
  let beds: boolean;
  if (wild.length > 0) {
    beds = true;
    rooms = wild.some((l) => l !== 'bed_id');
  } else {
    const deepest = concrete[concrete.length - 1];
    if (deepest === 'bed_id') [rooms, beds] = [false, true];
    else if (deepest === 'room_id') [rooms, beds] = [true, false];
    else return `a rule with only a ${LEVEL_NAME[deepest]} grants no room or bed: add room_id, bed_id or "*"`;
  }

  const grants: Grant[] = [];
  for (const row of matching) {
    if (rooms) grants.push({ site: row.site, room: row.room, bed: null });
    if (beds && row.bed) grants.push({ site: row.site, room: row.room, bed: row.bed });
  }
  if (grants.length === 0) return 'the rule grants no room or bed (ids on different branches, or a room without beds)';
  return grants;
}

/**
 * Every concrete id must name a node of that level in the company's layout (unknown ids and other
 * companies' ids get the same answer), then the rules' grants are combined without duplicates.
 */
export function resolveRules(rules: Rule[], rows: LocationRow[]): { grants: Grant[] } | { problems: RuleProblem[] } {
  const known = new Map<Level, Set<string>>(LEVELS.map((l) => [l, new Set<string>()]));
  for (const row of rows) {
    for (const l of LEVELS) {
      const node = row[FIELD[l]] as Named | undefined | null;
      if (node) known.get(l)?.add(node._id);
    }
  }
  const problems: RuleProblem[] = [];
  const byKey = new Map<string, Grant>();
  rules.forEach((rule, i) => {
    const unknown = LEVELS.filter((l) => rule[l] !== undefined && rule[l] !== '*' && !known.get(l)?.has(rule[l] as string));
    for (const l of unknown) {
      problems.push({ path: ['access_locations', String(i), l], message: `${l} ${rule[l]} is not a ${LEVEL_NAME[l]} of this company` });
    }
    if (unknown.length) return;
    const result = resolveRule(rule, rows);
    if (typeof result === 'string') {
      problems.push({ path: ['access_locations', String(i)], message: result });
      return;
    }
    for (const g of result) byKey.set(grantKey(g), g);
  });
  if (problems.length) return { problems };
  return { grants: [...byKey.values()] };
}

/**
 * Re-resolution after a layout change: the rules were accepted once, so a rule that grants nothing
 * any more (its ids deleted) contributes nothing instead of failing the schedule.
 */
export function regrant(rules: Rule[], rows: LocationRow[]): Grant[] {
  const byKey = new Map<string, Grant>();
  for (const rule of rules) {
    const result = resolveRule(rule, rows);
    if (typeof result !== 'string') for (const g of result) byKey.set(grantKey(g), g);
  }
  return [...byKey.values()];
}

/** Same rooms and beds, under the same names (a rename is shown by GET and sent to the worker again). */
export function sameGrants(a: Grant[], b: Grant[]): boolean {
  const key = (gs: Grant[]) =>
    gs
      .map((g) => `${grantKey(g)}|${g.site._id}|${g.site.name}|${g.room.name}|${g.bed?.name ?? ''}`)
      .sort()
      .join('\n');
  return key(a) === key(b);
}

const grantKey = (g: Grant) => `${g.room._id}|${g.bed?._id ?? ''}`;
