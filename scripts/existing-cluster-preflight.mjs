#!/usr/bin/env node
// @ts-check
// Entry point of the existing cluster's preflight Command (`create`): the program lives with its component
// (components/management-cluster/existing-cluster-preflight.mjs). Deployed stacks keep the command line
// `node scripts/existing-cluster-preflight.mjs` in their state, so this path stays when the program moves.
import "../components/management-cluster/existing-cluster-preflight.mjs";
