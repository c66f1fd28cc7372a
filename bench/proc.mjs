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

/**
 * How many times a process's threads went to sleep and were woken (their voluntary context switches,
 * summed over the threads alive now); 0 once it has ended. At low rates a booking's CPU follows its
 * wake-ups more than its work: each one starts on caches the other processes have since filled.
 */
export function processWakeups(pid) {
  let sum = 0;
  let tasks;
  try {
    tasks = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return 0;
  }
  for (const tid of tasks) {
    try {
      sum += Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8'))?.[1] ?? 0);
    } catch {
      // the thread ended meanwhile
    }
  }
  return sum;
}

/** The machine's busy and idle (idle + iowait) time over all its cores, from /proc/stat. */
export function machineTicks() {
  const [, ...fields] = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
  const idle = fields[3] + fields[4];
  return { busy: fields.slice(0, 8).reduce((a, b) => a + b, 0) - idle, idle };
}
