import { run } from './dlq';

// Dead letters from a terminal: `node dist/tools/dlq.js --help`.
run(process.argv.slice(2), process.env, {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  progress: (text) => process.stderr.write(text),
  isTTY: !!process.stderr.isTTY,
}).then(
  (code) => {
    process.exitCode = code;
  },
  (err: Error) => {
    process.stderr.write(`error: ${err.message}\n`);
    process.exitCode = 1;
  },
);
