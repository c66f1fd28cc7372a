export function processTicks(pid: number): number;
export function processWakeups(pid: number): number;
export function machineTicks(): { busy: number; idle: number };
