#!/usr/bin/env node
// @ts-check
// Entry point of a tenant's load-balancer drain (its `delete`); the program lives with its component (components/tenant-cluster/drain-load-balancers.mjs).
// Deployed stacks keep `node scripts/drain-load-balancers.mjs` in their state: a `delete` runs the command line kept in the state, so a moved file would break every deployed tenant's deletion
// (infra/model/contract/script-entry-points.ts).
import "../components/tenant-cluster/drain-load-balancers.mjs";
