/**
 * This machine's speed (a shared VM's varies from day to day, here 200 to 400 ms): a fixed
 * single-threaded job, so figures of runs on different days can be compared. Both reports print it.
 */
export function calibrate() {
  const t = process.hrtime.bigint();
  let x = 0;
  for (let i = 0; i < 2e8; i++) x += i % 7;
  if (x < 0) console.log(x); // keeps the loop from being optimised away
  return Math.round(Number(process.hrtime.bigint() - t) / 1e6);
}
