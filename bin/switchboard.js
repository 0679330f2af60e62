#!/usr/bin/env node
// Runs the TypeScript entry point directly with Node's type stripping, which needs Node 22.18 or later
// (the project pins Node 24: `npm start` and `npx switchboard` use it). An older Node says so plainly.
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 18)) {
  process.stderr.write(
    `switchboard needs Node.js 22.18 or later (this is ${process.version}). Run it with the pinned Node: npm start, or npx switchboard.\n`,
  );
  process.exit(1);
}
await import('../src/main.ts');
