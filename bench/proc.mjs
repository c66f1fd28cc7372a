// CPU counters from /proc, in clock ticks (USER_HZ, 100 a second), for the benchmarks that say which
// process or whether the machine was the limit.
import fs from 'node:fs';

/** The CPU a process has used (utime + stime); 0 once it has ended. */
export function processTicks(pid) {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0;
  }
}

/** The machine's busy and idle (idle + iowait) time over all its cores, from /proc/stat. */
export function machineTicks() {
  const [, ...fields] = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
  const idle = fields[3] + fields[4];
  return { busy: fields.slice(0, 8).reduce((a, b) => a + b, 0) - idle, idle };
}
