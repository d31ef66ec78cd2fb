#!/usr/bin/env node
// @ts-check
// Entry point of the fleet's destroy guard (its `delete`); the program lives with its component (components/destroy-guard/foreign-clusters.mjs).
// Deployed stacks keep `node scripts/destroy-guard.mjs` in their state: a `delete` runs the command line kept in the state, so a moved file would break every deployed stack's destroy
// (infra/model/contract/script-entry-points.ts).
import "../components/destroy-guard/foreign-clusters.mjs";
