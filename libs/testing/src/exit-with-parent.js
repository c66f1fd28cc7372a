// Preloaded into every app the tests launch (launcher.ts `launchApp`): the app stops, as on SIGTERM,
// once the process that launched it is gone. Its stdin is a pipe from that process, which the kernel
// closes however the process ends (an e2e run that died of heap exhaustion left its whole system
// running for an hour, loading every test run after it). Unreferenced: it never keeps an app alive.
process.stdin.on('end', () => process.kill(process.pid, 'SIGTERM'));
process.stdin.resume();
process.stdin.unref();
