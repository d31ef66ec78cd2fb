#!/usr/bin/env node
// @ts-check
// Entry point of a tenant's kubeconfig Command (`create`); the program lives with its component (components/tenant-cluster/workload-kubeconfig.mjs).
// Deployed stacks keep `node scripts/workload-kubeconfig.mjs` in their state: a changed command line would run it again at the next `up`
// (infra/model/contract/script-entry-points.ts).
import "../components/tenant-cluster/workload-kubeconfig.mjs";
