#!/usr/bin/env node
// @ts-check
// Entry point of the ClusterApi component's admission wait (`create`); the program lives with its component (components/cluster-api/wait-for-admission.mjs).
// Deployed stacks keep `node scripts/wait-for-admission.mjs` in their state: a changed command line would run it again at the next `up`
// (infra/model/contract/script-entry-points.ts).
import "../components/cluster-api/wait-for-admission.mjs";
