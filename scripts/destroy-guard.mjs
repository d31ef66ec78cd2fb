#!/usr/bin/env node
// @ts-check
// Entry point of the fleet's destroy guard (its `delete`): the program lives with its component
// (components/destroy-guard/foreign-clusters.mjs). Deployed stacks keep the command line
// `node scripts/destroy-guard.mjs` in their state, so this path stays when the program moves.
import "../components/destroy-guard/foreign-clusters.mjs";
