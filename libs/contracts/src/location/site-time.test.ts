import { formatSiteTime, localInstant, resolveStayTime, siteTimeProblem } from './site-time';

const site = (time_zone: string) => ({ time_zone, check_in_time: '15:00', check_out_time: '11:00' });
const utc = (wall: string, zone: string) => localInstant(wall, zone).toUTC().toISO();

describe('site time', () => {
  it('resolves the issue example: a New York stay from 15:00 EST to 11:00 EDT across the change', () => {
    expect(resolveStayTime('2030-03-09', 'check_in', site('America/New_York'))).toBe('2030-03-09T20:00:00.000Z');
    expect(resolveStayTime('2030-03-11', 'check_out', site('America/New_York'))).toBe('2030-03-11T15:00:00.000Z');
  });

  it('reads a date-time without offset as the local time of the site, one with an offset as that instant', () => {
    expect(resolveStayTime('2030-03-09T15:00:00.000', 'check_in', site('America/New_York'))).toBe('2030-03-09T20:00:00.000Z');
    expect(resolveStayTime('2030-07-01T15:00:00.000', 'check_in', site('Europe/Berlin'))).toBe('2030-07-01T13:00:00.000Z');
    expect(resolveStayTime('2030-03-09T15:00:00.000Z', 'check_in', site('America/New_York'))).toBe('2030-03-09T15:00:00.000Z');
    expect(resolveStayTime('2030-03-09T15:00:00+02:00', 'check_in', site('America/New_York'))).toBe('2030-03-09T13:00:00.000Z');
  });

  it('moves a time of a spring-forward gap to the first valid instant, west and east of UTC', () => {
    expect(utc('2030-03-10T02:30', 'America/New_York')).toBe('2030-03-10T07:00:00.000Z'); // 03:00 EDT
    expect(utc('2030-03-31T02:30', 'Europe/Berlin')).toBe('2030-03-31T01:00:00.000Z'); // 03:00 CEST
    expect(utc('2030-10-06T02:30', 'Australia/Sydney')).toBe('2030-10-05T16:00:00.000Z'); // 03:00 AEDT
    expect(utc('2030-10-06T02:15', 'Australia/Lord_Howe')).toBe('2030-10-05T15:30:00.000Z'); // a half-hour change: 02:30 +11:00
  });

  it('takes the earlier instant of a time that occurs twice (fall back), west and east of UTC', () => {
    expect(utc('2030-11-03T01:30', 'America/New_York')).toBe('2030-11-03T05:30:00.000Z'); // 01:30 EDT, not EST
    expect(utc('2030-10-27T02:30', 'Europe/Berlin')).toBe('2030-10-27T00:30:00.000Z'); // 02:30 CEST, not CET
    expect(utc('2030-04-07T02:30', 'Australia/Sydney')).toBe('2030-04-06T15:30:00.000Z'); // 02:30 AEDT, not AEST
  });

  it('leaves ordinary times alone and a zone without daylight saving at its offset', () => {
    expect(utc('2030-06-01T12:00', 'Asia/Tokyo')).toBe('2030-06-01T03:00:00.000Z');
    expect(utc('2030-03-10T03:00', 'America/New_York')).toBe('2030-03-10T07:00:00.000Z');
    expect(utc('2030-11-03T02:00', 'America/New_York')).toBe('2030-11-03T07:00:00.000Z');
  });

  it("says an instant in the site's time with the zone's abbreviation, or its offset", () => {
    expect(formatSiteTime('2030-03-09T20:00:00.000Z', 'America/New_York')).toBe('9 Mar 2030, 15:00 EST');
    expect(formatSiteTime('2030-03-11T15:00:00.000Z', 'America/New_York')).toBe('11 Mar 2030, 11:00 EDT');
    expect(formatSiteTime('2030-07-01T13:00:00.000Z', 'Europe/Berlin')).toBe('1 Jul 2030, 15:00 CEST');
    expect(formatSiteTime('2030-07-01T06:00:00.000Z', 'Asia/Tokyo')).toBe('1 Jul 2030, 15:00 GMT+9');
    expect(formatSiteTime('2030-07-01T06:00:00.000Z', 'UTC')).toBe('1 Jul 2030, 06:00 UTC');
  });

  it('names the field of an unknown zone or a malformed time', () => {
    expect(siteTimeProblem('time_zone', 'Mars/Olympus')).toMatch(/^time_zone /);
    expect(siteTimeProblem('time_zone', 'America/New_York')).toBeUndefined();
    expect(siteTimeProblem('check_in_time', '3pm')).toMatch(/^check_in_time /);
    expect(siteTimeProblem('check_out_time', '24:00')).toMatch(/^check_out_time /);
    expect(siteTimeProblem('check_out_time', '07:30')).toBeUndefined();
  });
});
