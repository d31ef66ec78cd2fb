#!/usr/bin/env node
// @ts-check
// Entry point of the existing cluster's preflight Command (`create`); the program lives with its component (components/management-cluster/existing-cluster-preflight.mjs).
// Deployed stacks keep `node scripts/existing-cluster-preflight.mjs` in their state: a changed command line would run it again at the next `up`
// (infra/model/contract/script-entry-points.ts).
import "../components/management-cluster/existing-cluster-preflight.mjs";
