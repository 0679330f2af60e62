#!/usr/bin/env node
// Runs the TypeScript entry point directly with Node's type stripping (Node >= 22.18).
import '../src/main.ts';
