// `node kill-with-parent.js <pid> [dir]`, spawned detached with its stdin a pipe from a test process
// (private-rabbit.ts, for the RabbitMQ nodes a test starts): once that process is gone, however it
// ended, the kernel closes the pipe, and this kills <pid> and removes [dir]. A test process that
// died of heap exhaustion had left its own broker nodes running beside every later run. The
// processes a test launches that are Node apps stop themselves instead (exit-with-parent.js).
const fs = require('fs');

const [pid, dir] = [Number(process.argv[2]), process.argv[3]];
const alive = () => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
process.stdin.on('end', () => {
  if (alive()) process.kill(pid, 'SIGKILL');
  const deadline = Date.now() + 10_000;
  const done = setInterval(() => {
    if (alive() && Date.now() < deadline) return;
    clearInterval(done);
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  }, 100);
});
process.stdin.resume();
